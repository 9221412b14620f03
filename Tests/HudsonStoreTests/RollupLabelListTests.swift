// The rollup's `labels` column (space-separated label ids) read back as a list.
@testable import HudsonStore
import Testing

@Suite("The rollup's label list, split")
struct RollupLabelListTests {
    @Test("label ids come back in order; empty text and repeated or edge spaces give no empty ids")
    func splits() {
        #expect(Store.labelList("") == [])
        #expect(Store.labelList("INBOX") == ["INBOX"])
        #expect(Store.labelList("IMPORTANT INBOX Label_12 UNREAD") == ["IMPORTANT", "INBOX", "Label_12", "UNREAD"])
        #expect(Store.labelList(" INBOX  UNREAD ") == ["INBOX", "UNREAD"])
        #expect(Store.labelList("Hudson+3 Label_ünï") == ["Hudson+3", "Label_ünï"])
        // The same split serves a rollup row's participants, names that hold spaces.
        let separator = Store.participantSeparator
        #expect(Store.splitOnByte("Doe, Jane\(separator)\(separator)Zoë Ünal\(separator)", Store.participantSeparatorByte)
                == ["Doe, Jane", "Zoë Ünal"])
    }
}
