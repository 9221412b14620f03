// The two-way export recipes of docs/scripting.md (issue 39): each is run as written,
// then a change is made the way its mail client makes it (a notmuch tag, a Maildir
// rename) and the command the recipe gives the client to run is run; the change must
// reach the fake Gmail.
import Foundation
import HudsonTestSupport
import Testing

extension CookbookTests {
    func twoWay(_ recipe: Recipe, _ k: Kitchen) throws {
        guard let notmuch = MailIndexers.notmuch, let mu = MailIndexers.mu else {
            #expect(!MailClients.isCI, "notmuch and mu are required under CI=true (scripts/lib.sh: ensure_mail_indexers)")
            return
        }
        let first = try k.cook(recipe)
        #expect(first.status == 0 && first.stderr.isEmpty, "\(first)")
        let maildir = k.home + "/Mail/gmail"
        func gmailID(ofFile name: String) -> String {
            String(name.split(separator: "/").last!.split(separator: ":")[0].components(separatedBy: ".hudson-")[1])
        }
        switch recipe.name {
        case "neomutt-notmuch":
            if let neomutt = ManPages.tool("neomutt") {
                let check = try k.f.shell("'\(neomutt)' -n -F \"$HOME/.config/neomutt/neomuttrc\" -Q nm_default_url")
                #expect(check.status == 0 && check.stdout.contains(maildir), "the recipe's neomuttrc: \(check)")
            }
            // What the recipe's `y` macro does: remove the inbox tag.
            let message = try #require(try k.f.shell("'\(notmuch)' search --output=messages --limit=1 tag:inbox").lines.first)
            let file = try #require(try k.f.shell("'\(notmuch)' search --output=files --limit=1 '\(message)'").lines.first)
            #expect(try k.f.shell("'\(notmuch)' tag -inbox -- '\(message)'").status == 0)
            let again = try k.cook(recipe)
            #expect(again.status == 0 && again.stderr.hasPrefix("hd-export: action "), "\(again)")
            #expect(try k.fake.messages()[gmailID(ofFile: file)]?.labels.contains("INBOX") == false, "archived at Gmail")
        case "aerc-notmuch":
            let message = try #require(try k.f.shell("'\(notmuch)' search --output=messages --limit=1 tag:unread").lines.first)
            let file = try #require(try k.f.shell("'\(notmuch)' search --output=files --limit=1 '\(message)'").lines.first)
            #expect(try k.f.shell("'\(notmuch)' tag -unread -- '\(message)'").status == 0)
            let conf = try String(contentsOfFile: k.home + "/.config/aerc/accounts.conf", encoding: .utf8)
            let command = try #require(conf.split(separator: "\n").first { $0.hasPrefix("check-mail-cmd = ") }?.dropFirst("check-mail-cmd = ".count))
            let checked = try k.f.shell(String(command))
            #expect(checked.status == 0 && checked.stderr.hasPrefix("hd-export: action "), "\(checked)")
            #expect(try k.fake.messages()[gmailID(ofFile: file)]?.labels.contains("UNREAD") == false, "read at Gmail")
        default:
            let unreadFiles = try k.f.shell("'\(mu)' find --muhome=\"$HOME/.cache/mu\" --fields=l flag:unread").lines
            try #require(unreadFiles.count >= 2, "\(unreadFiles)")
            let unread = unreadFiles[0], refiled = unreadFiles[1]
            // As mu4e marks a message read with mu4e-change-filenames-when-moving: a new name, S added to its flags.
            let parts = unread.components(separatedBy: ":2,")
            #expect(parts.count == 2, "\(unread)")
            let directory = unread.components(separatedBy: "/").dropLast(2).joined(separator: "/")
            try FileManager.default.moveItem(atPath: unread, toPath: directory + "/cur/1733500000.5d1c0e7f9a2b4c63.host:2," + String(Set(parts[1] + "S").sorted()))
            let el = try String(contentsOfFile: k.home + "/.emacs.d/hudson-mu4e.el", encoding: .utf8)
            // As mu4e refiles (r): the file moved to the refile folder (mu4e's default /archive
            // unless the recipe sets one); a file moved out of the export would be read back as trash.
            let folder = el.components(separatedBy: "mu4e-refile-folder \"").dropFirst().first?.components(separatedBy: "\"").first ?? "/archive"
            if folder != "/" {
                let target = maildir + folder + "/cur"
                try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
                try FileManager.default.moveItem(atPath: refiled, toPath: target + "/" + refiled.components(separatedBy: "/").last!)
            }
            let command = try #require(el.components(separatedBy: "mu4e-get-mail-command \"").dropFirst().first?.components(separatedBy: "\"").first)
            let updated = try k.f.shell(command)
            #expect(updated.status == 0 && updated.stderr.hasPrefix("hd-export: action "), "\(updated)")
            #expect(try k.fake.messages()[gmailID(ofFile: unread)]?.labels.contains("UNREAD") == false, "read at Gmail")
            #expect(try k.fake.messages()[gmailID(ofFile: refiled)]?.labels.contains("TRASH") == false, "refiled, not trashed")
        }
        // Nothing more is read back: no flip-flop.
        let idle = try k.f.shell("hd-export \"$HOME/Mail/gmail\"")
        #expect(idle.status == 0 && idle.stderr.isEmpty, "\(idle)")
    }
}
