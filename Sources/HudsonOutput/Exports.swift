/*!
 HudsonOutput's users see the text rules it is built on (TerminalSafety, in HudsonText)
 as its own, as they did when they lived here: a command imports HudsonOutput and
 quotes, shows and checks text with the same names.
 */
@_exported import HudsonText
