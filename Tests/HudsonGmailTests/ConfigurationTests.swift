/*!
 Client configuration rules (CONTRACT.md "Endpoints"): plain `http://` only for loopback
 hosts, https for everything else, and numeric settings within their documented ranges. The
 check runs when the client is created, so a misconfigured URL never carries a token.
 */

import Foundation
import Testing
@testable import HudsonGmail

@Suite("Configuration")
struct ConfigurationTests {
    private func client(_ url: String, _ configure: (inout GmailClientConfiguration) -> Void = { _ in }) throws(GmailConfigurationError) -> GmailClient {
        var configuration = GmailClientConfiguration(baseURL: URL(string: url)!)
        configure(&configuration)
        return try GmailClient(configuration: configuration, tokenProvider: StaticAccessTokenProvider(token: "t"))
    }

    @Test("plain http is refused for hosts that are not loopback", arguments: [
        "http://gmail.googleapis.com", "http://10.0.0.1:8080", "http://127.0.0.1.evil.example",
        "http://localhost.evil.example", "http://[::2]:80", "http://128.0.0.1", "http://127.0.0.256", "http://127.1",
    ])
    func httpRefusedForRemoteHosts(_ url: String) {
        #expect(throws: GmailConfigurationError.self) { _ = try client(url) }
        do {
            _ = try client(url)
        } catch {
            guard case .insecureURL = error else {
                Issue.record("expected insecureURL, got \(error)")
                return
            }
            #expect(error.description.contains("use https"))
        }
    }

    @Test("plain http is allowed for loopback hosts", arguments: [
        "http://127.0.0.1:8080", "http://127.8.9.10", "http://localhost:9", "http://LOCALHOST", "http://[::1]:4000",
    ])
    func httpAllowedForLoopback(_ url: String) throws {
        _ = try client(url)
    }

    @Test("https is allowed for any host, other schemes are not")
    func schemes() throws {
        _ = try client("https://gmail.googleapis.com")
        _ = try client("https://proxy.example.org:8443/gmail-proxy")
        #expect(throws: GmailConfigurationError.invalidURL("ftp://gmail.googleapis.com")) { _ = try client("ftp://gmail.googleapis.com") }
        #expect(throws: GmailConfigurationError.self) { _ = try client("https://user:pw@gmail.googleapis.com") }
        #expect(throws: GmailConfigurationError.self) { _ = try client("https://gmail.googleapis.com/?key=1") }
    }

    @Test("the defaults are Google's endpoint, 5 attempts, batches of 25, 4 in flight")
    func defaults() throws {
        let configuration = GmailClientConfiguration()
        #expect(configuration.baseURL.absoluteString == "https://gmail.googleapis.com")
        #expect(configuration.maxAttempts == 5 && configuration.batchSize == 25 && configuration.maxConcurrentRequests == 4)
        try configuration.validate()
    }

    @Test("settings out of range are refused")
    func ranges() {
        let base = "https://gmail.googleapis.com"
        #expect(throws: GmailConfigurationError.self) { _ = try client(base) { $0.batchSize = 101 } }
        #expect(throws: GmailConfigurationError.self) { _ = try client(base) { $0.batchSize = 0 } }
        #expect(throws: GmailConfigurationError.self) { _ = try client(base) { $0.maxAttempts = 0 } }
        #expect(throws: GmailConfigurationError.self) { _ = try client(base) { $0.maxConcurrentRequests = 0 } }
        #expect(throws: GmailConfigurationError.self) { _ = try client(base) { $0.maxBackoff = .milliseconds(10) } }
    }

    @Test("the method cost table matches gmail-api.md §3")
    func methodCosts() {
        let costs = Dictionary(uniqueKeysWithValues: GmailMethod.allCases.map { ($0, $0.units) })
        #expect(costs == [
            .getProfile: 1, .labelsList: 1, .labelsGet: 1, .labelsCreate: 5, .labelsPatch: 5, .labelsDelete: 5, .historyList: 2, .messagesList: 5,
            .messagesGet: 5, .attachmentsGet: 5, .messagesModify: 5, .messagesTrash: 5, .messagesUntrash: 5,
            .messagesBatchModify: 50, .messagesSend: 100, .messagesImport: 25,
            .draftsCreate: 10, .draftsUpdate: 15, .draftsGet: 5, .draftsList: 5, .draftsSend: 100, .draftsDelete: 10,
            .filtersList: 1,
        ])
        #expect(GmailMethod.allCases.filter { !$0.isIdempotent } == [.messagesSend, .messagesImport, .draftsCreate, .draftsSend])
    }
}
