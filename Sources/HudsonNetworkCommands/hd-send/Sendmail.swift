/*!
 `hd-send` as a sendmail program (sendmail(8) as msmtp implements it), for mutt, neomutt,
 aerc, Emacs and `git send-email`: a complete message on standard input, `-t` (recipients
 from its headers) or recipients as operands, `-i`/`-oi`, `-f ADDR`, `-F NAME`, and the
 options sendmail programs traditionally accept and ignore.

 Gmail's API has no envelope: `messages.send` delivers to the To, Cc and Bcc headers and
 hides Bcc from the other recipients (gmail-api.md §2.7). So the operands are checked
 against the headers: an operand no header names (git send-email's --bcc and --cc, mutt's
 Bcc, which it leaves out of the headers) is added in a Bcc header, never dropped. Without
 `-t` the operands are the recipients a sendmail program is asked to deliver to, so a
 header recipient that no operand names (a bounce, `Resent-To`) would receive a message
 nobody asked to send it; such a message is refused rather than sent.
 */
import HudsonCLI
import HudsonMail
import HudsonOutput

public enum SendmailCompatibility {
    /// Options sendmail programs accept and ignore (msmtp's list): hidden from help, accepted
    /// so that a mail client's command line works unchanged.
    public static let ignoredOptions: [OptionSpec] = [
        .value("sendmail-body-type", short: "B", name: "TYPE", help: "sendmail -B: ignored.", hidden: true),
        .value("sendmail-dsn", short: "N", name: "DSN", help: "sendmail -N: ignored.", hidden: true),
        .value("sendmail-dsn-return", short: "R", name: "RET", help: "sendmail -R: ignored.", hidden: true),
        .value("sendmail-envelope-id", short: "V", name: "ENVID", help: "sendmail -V: ignored.", hidden: true),
        .value("sendmail-mode", short: "b", name: "MODE", help: "sendmail -bm: the only mode.", hidden: true),
        .value("sendmail-return-path", short: "r", name: "ADDRESS", help: "sendmail -r: as -f.", hidden: true),
        .value("sendmail-long-option", short: "O", name: "OPTION", help: "sendmail -O: ignored.", hidden: true),
        .value("sendmail-config", short: "C", name: "FILE", help: "sendmail -C: ignored.", hidden: true),
        .value("sendmail-log-tag", short: "L", name: "TAG", help: "sendmail -L: ignored.", hidden: true),
        .value("sendmail-traffic-log", short: "X", name: "FILE", help: "sendmail -X: ignored.", hidden: true),
        .flag("sendmail-verbose", short: "v", help: "sendmail -v: ignored.", hidden: true),
        .flag("sendmail-gateway", short: "G", help: "sendmail -G: ignored.", hidden: true),
        .flag("sendmail-me-too", short: "m", help: "sendmail -m: ignored.", hidden: true),
        .flag("sendmail-no-aliases", short: "n", help: "sendmail -n: ignored.", hidden: true),
        .flag("sendmail-initial-submission", short: "U", help: "sendmail -U: ignored.", hidden: true),
    ]

    /// The options that only a sendmail-style invocation uses.
    static let sendmailOptions = ["read-recipients", "ignore-dots", "sendmail-option", "full-name"]
        + ignoredOptions.map(\.long)

    /// Whether the command line is a sendmail program's: recipients as operands, or any
    /// sendmail option.
    public static func isSendmail(_ arguments: ParsedArguments) -> Bool {
        !arguments.operands.isEmpty || sendmailOptions.contains(where: arguments.isGiven)
    }

    /// The recipients the operands name: each a comma-separated list of addresses, read by
    /// the one strict rule for outgoing recipients (64 for anything it refuses).
    static func operandRecipients(_ operands: [String]) throws -> [MailAddress] {
        try operands.flatMap { operand in try Composer.recipientArgument(operand, what: "recipient") }
    }

    /// The operands the message's headers do not name (compared by address, without case),
    /// once each: what goes into the added Bcc header.
    public static func unnamed(_ operands: [MailAddress], headerRecipients: [MailAddress]) -> [MailAddress] {
        var named = Set(headerRecipients.map { $0.address.lowercased() })
        return operands.filter { named.insert($0.address.lowercased()).inserted }
            .map { MailAddress(address: $0.address) }
    }

    /// Header recipients no operand names: without -t, people the message would reach
    /// though the mail client did not ask for it.
    public static func unrequested(_ headerRecipients: [MailAddress], operands: [MailAddress]) -> [MailAddress] {
        let asked = Set(operands.map { $0.address.lowercased() })
        return headerRecipients.filter { !asked.contains($0.address.lowercased()) }
    }
}
