/*!
 Response bodies written from gmail.v1.json and the examples in gmail-api.md §2 and §4, as
 Gmail sends them: int64 values as strings, empty fields left out. Kept as Swift literals so
 the test target needs no resource bundle. Also the helper that builds a client against a
 TestHTTPServer with a manual clock and a fixed jitter, so no test touches the network or
 really sleeps.
 */

import Foundation
@testable import HudsonGmail

enum Fixture {
    static let profile = """
        {"emailAddress": "ann@example.com", "messagesTotal": 48213,
         "threadsTotal": 30117, "historyId": "9876543"}
        """

    static let messageList = """
        {"messages": [{"id": "18c9a4f0e2b1d3c7", "threadId": "18c9a4f0e2b1d3c7"},
                      {"id": "18c9a3aa01f2e4b5", "threadId": "18c99f0c7d6e5a41"}],
         "nextPageToken": "09876543210987654321", "resultSizeEstimate": 201}
        """

    static let emptyMessageList = #"{"resultSizeEstimate": 0}"#

    static let fullMessage = """
        {"id": "18c9a4f0e2b1d3c7", "threadId": "18c9a4f0e2b1d3c7",
         "labelIds": ["UNREAD", "IMPORTANT", "CATEGORY_PERSONAL", "INBOX"],
         "snippet": "Hi Ann, the draft is attached. Let me know what you think &amp; I will",
         "historyId": "9876512", "internalDate": "1733140800000", "sizeEstimate": 48712,
         "payload": {"partId": "", "mimeType": "multipart/mixed", "filename": "",
           "headers": [
             {"name": "Received", "value": "by 2002:a05:6000:1:b0:33a:1:0 with SMTP id x; Mon, 2 Dec 2024 04:00:00 -0800 (PST)"},
             {"name": "Date", "value": "Mon, 2 Dec 2024 13:00:00 +0100"},
             {"name": "Message-ID", "value": "<CAF=abc123@mail.gmail.com>"},
             {"name": "Subject", "value": "Quarterly report"},
             {"name": "From", "value": "Bob Example <bob@example.org>"},
             {"name": "To", "value": "Ann <ann@example.com>"},
             {"name": "subject", "value": "a second Subject header"},
             {"name": "X-Empty"},
             {"name": "Content-Type", "value": "multipart/mixed; boundary=\\"000000000000a1b2c3\\""}],
           "body": {"size": 0},
           "parts": [
             {"partId": "0", "mimeType": "multipart/alternative", "filename": "",
              "headers": [{"name": "Content-Type", "value": "multipart/alternative; boundary=\\"000000000000d4e5f6\\""}],
              "body": {"size": 0},
              "parts": [
                {"partId": "0.0", "mimeType": "text/plain", "filename": "",
                 "headers": [{"name": "Content-Type", "value": "text/plain; charset=\\"UTF-8\\""},
                             {"name": "Content-Transfer-Encoding", "value": "quoted-printable"}],
                 "body": {"size": 27, "data": "SGkgQW5uLCB0aGUgZHJhZnQgaXMgYXR0YWNoZWQuDQo="}},
                {"partId": "0.1", "mimeType": "text/html", "filename": "",
                 "headers": [{"name": "Content-Type", "value": "text/html; charset=\\"UTF-8\\""}],
                 "body": {"size": 44, "data": "PGRpdj5IaSBBbm4sIHRoZSBkcmFmdCBpcyBhdHRhY2hlZC48L2Rpdj4NCg=="}}]},
             {"partId": "1", "mimeType": "application/pdf", "filename": "report.pdf",
              "headers": [{"name": "Content-Type", "value": "application/pdf; name=\\"report.pdf\\""},
                          {"name": "Content-Disposition", "value": "attachment; filename=\\"report.pdf\\""}],
              "body": {"attachmentId": "ANGjdJ8w-long-opaque-id", "size": 40211}}]}}
        """

    static let minimalMessage = """
        {"id": "18c9a4f0e2b1d3c7", "threadId": "18c9a4f0e2b1d3c7", "labelIds": ["INBOX", "UNREAD"],
         "snippet": "Hi Ann, ...", "historyId": "9876512", "internalDate": "1733140800000", "sizeEstimate": 48712}
        """

    static let rawMessage = """
        {"id": "18c9a4f0e2b1d3c7", "threadId": "18c9a4f0e2b1d3c7", "labelIds": ["INBOX"],
         "historyId": "9876512", "internalDate": "1733140800000", "sizeEstimate": 48712,
         "raw": "RGVsaXZlcmVkLVRvOiBhbm5AZXhhbXBsZS5jb20NCg=="}
        """

    /// What modify and trash return: only id, threadId, labelIds are promised (§2.5).
    static let modifiedMessage = #"{"id":"18c9a4f0e2b1d3c7","threadId":"18c9a4f0e2b1d3c7","labelIds":["STARRED","IMPORTANT"]}"#

    static let sentMessage = #"{"id": "18c9b0aa00000001", "threadId": "18c9a4f0e2b1d3c7", "labelIds": ["SENT"]}"#

    static let historyPage = """
        {"history": [
           {"id": "9876520", "messages": [{"id": "18c9b1c2d3e4f506", "threadId": "18c9b1c2d3e4f506"}],
            "messagesAdded": [{"message": {"id": "18c9b1c2d3e4f506", "threadId": "18c9b1c2d3e4f506", "labelIds": ["UNREAD", "INBOX"]}}]},
           {"id": "9876533", "messages": [{"id": "18c9a4f0e2b1d3c7", "threadId": "18c9a4f0e2b1d3c7"}],
            "labelsRemoved": [{"message": {"id": "18c9a4f0e2b1d3c7", "threadId": "18c9a4f0e2b1d3c7", "labelIds": ["IMPORTANT"]},
                               "labelIds": ["UNREAD"]}]},
           {"id": "9876540", "messages": [{"id": "18c9a3aa01f2e4b5", "threadId": "18c99f0c7d6e5a41"}],
            "labelsAdded": [{"message": {"id": "18c9a3aa01f2e4b5", "threadId": "18c99f0c7d6e5a41", "labelIds": ["TRASH"]},
                             "labelIds": ["TRASH"]}]},
           {"id": "9876551", "messages": [{"id": "18c9990011223344", "threadId": "18c9990011223344"}],
            "messagesDeleted": [{"message": {"id": "18c9990011223344", "threadId": "18c9990011223344"}}]}],
         "nextPageToken": "00123456789", "historyId": "9876560"}
        """

    /// §9.1: a page that promises more but carries no records.
    static let historyPageWithoutRecords = #"{"nextPageToken": "00123456790", "historyId": "9876560"}"#

    /// §9.3: an empty poll.
    static let emptyHistory = #"{"historyId": "1710"}"#

    static let labels = """
        {"labels": [
          {"id": "INBOX", "name": "INBOX", "messageListVisibility": "hide", "labelListVisibility": "labelShow", "type": "system"},
          {"id": "Label_12", "name": "Receipts/2024", "type": "user", "messageListVisibility": "show",
           "labelListVisibility": "labelShow", "messagesTotal": 120, "messagesUnread": 3, "threadsTotal": 97,
           "threadsUnread": 2, "color": {"textColor": "#000000", "backgroundColor": "#16a766"}}]}
        """

    static let createdLabel = """
        {"id": "Label_13", "name": "Receipts/2025", "type": "user", "messageListVisibility": "show", "labelListVisibility": "labelShow"}
        """

    static let attachment = #"{"size": 40211, "data": "JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoK"}"#

    /// Google's error envelope (§4), with `errors[]` and `status`.
    static func error(_ code: Int, reason: String, message: String = "An error", status: String? = nil) -> String {
        let statusField = status.map { #", "status": "\#($0)""# } ?? ""
        return #"{"error": {"code": \#(code), "message": "\#(message)", "errors": [{"message": "\#(message)", "domain": "global", "reason": "\#(reason)"}]\#(statusField)}}"#
    }

    /// The same envelope without `errors[]` (newer-style errors).
    static func bareError(_ code: Int, message: String, status: String) -> String {
        #"{"error": {"code": \#(code), "message": "\#(message)", "status": "\#(status)"}}"#
    }

    static let notFound = error(404, reason: "notFound", message: "Requested entity was not found.", status: "NOT_FOUND")
}

/// A client aimed at `server`, with a manual clock and `jitter` as its random source.
func makeClient(
    _ server: TestHTTPServer,
    tokens: any AccessTokenProvider = StaticAccessTokenProvider(tokens: ["ya29.first-token", "ya29.second-token"]),
    clock: ManualClock = ManualClock(),
    jitter: Double = 0.5,
    quota: QuotaBucket? = nil,
    configure: (inout GmailClientConfiguration) -> Void = { _ in }
) throws -> GmailClient {
    var configuration = GmailClientConfiguration(baseURL: server.baseURL, userAgent: "hudson-tests")
    configure(&configuration)
    return try GmailClient(
        configuration: configuration, tokenProvider: tokens,
        quota: quota ?? QuotaBucket(clock: clock.scheduling), clock: clock.scheduling, random: { jitter }
    )
}

/// Runs `body` and returns the GmailError it throws, or nil.
func gmailError(_ body: () async throws -> Void) async -> GmailError? {
    do {
        try await body()
        return nil
    } catch let error as GmailError {
        return error
    } catch {
        return .invalidResponse("unexpected error type \(type(of: error))")
    }
}
