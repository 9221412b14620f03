/*!
 Migration 033_list_headers (issue 42): each message's unsubscribe offer and what vouches
 for it (Senders/ListHeaders.swift), and whether they are known: sync's metadata asks for
 them from now on (`list_headers_known = 1`); a message stored before is filled here from
 its stored RFC 822 source, when the account kept one, and stays unknown otherwise
 (`Store.listHeaderCoverage` counts them; `hd-senders` says how many).

 The hudson_list_*_v1 functions read a source's header block (ListHeaders(source:)); they
 are defined on every connection that can migrate (Store.open) and must never change
 their answers, like hudson_shown_v1.
 */
extension Schema {
    static let listHeaders = """
    ALTER TABLE messages ADD COLUMN list_unsubscribe TEXT;
    ALTER TABLE messages ADD COLUMN list_unsubscribe_post TEXT;
    ALTER TABLE messages ADD COLUMN authentication_results TEXT;
    ALTER TABLE messages ADD COLUMN dkim_signatures TEXT;      -- d=; s=; h= of each DKIM-Signature, one a line
    ALTER TABLE messages ADD COLUMN list_headers_known INTEGER NOT NULL DEFAULT 0 CHECK (list_headers_known IN (0, 1));

    UPDATE messages SET
           list_unsubscribe = nullif(hudson_list_unsubscribe_v1(s.source), ''),
           list_unsubscribe_post = nullif(hudson_list_unsubscribe_post_v1(s.source), ''),
           authentication_results = nullif(hudson_authentication_results_v1(s.source), ''),
           dkim_signatures = nullif(hudson_dkim_signatures_v1(s.source), ''),
           list_headers_known = 1
      FROM message_sources AS s
     WHERE s.message_id = messages.id;
    """
}
