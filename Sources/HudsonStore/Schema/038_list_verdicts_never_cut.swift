/*!
 Migration 038_list_verdicts_never_cut (issue 42): an `Authentication-Results` or DKIM
 summary longer than ListHeaders.maximumValueBytes was kept cut at that bound, and a cut
 inside `header.i=@news.example.org.attacker.example` reads as a pass for
 news.example.org. Such values are now not kept (ListHeaders.whole); here the ones kept
 cut before are emptied. A value cut at the bound is at least that long (a split UTF-8
 sequence became U+FFFD), so every value that long goes: one exactly that long had its
 verdict read whole, and loses it (no one-click, no mailto: the verdict is unknown).
 */
extension Schema {
    static let listVerdictsNeverCut = """
    UPDATE messages SET authentication_results = NULL
     WHERE length(CAST(authentication_results AS BLOB)) >= 4096;
    UPDATE messages SET dkim_signatures = NULL
     WHERE length(CAST(dkim_signatures AS BLOB)) >= 4096;
    """
}
