/*!
 What standard output is: a terminal (aligned, truncated, coloured unless NO_COLOR)
 or a pipe (complete, uncoloured fields). Presentation only; never the data.
 */
import Glibc
import HudsonOutput

public enum Terminal {
    public static func info(environment: [String: String]) -> TerminalInfo {
        guard isatty(1) == 1 else { return .pipe }
        var size = winsize()
        let width: Int
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            width = Int(size.ws_col)
        } else if let columns = environment["COLUMNS"].flatMap(Int.init), columns > 0 {
            width = columns
        } else {
            width = 80
        }
        let noColor = environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        let dumb = environment["TERM"] == "dumb"
        return TerminalInfo(isTerminal: true, width: width, color: !noColor && !dumb)
    }

    public static var stderrIsTerminal: Bool { isatty(2) == 1 }
}
