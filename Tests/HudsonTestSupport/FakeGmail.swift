// The project's fake Gmail (tools/fake-gmail) as a test fixture: started on a random
// port on 127.0.0.1, driven through its admin interface ("another device", faults,
// the request log), stopped when the fixture goes away.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

public final class FakeGmail: @unchecked Sendable {
    public let url: String
    public let email: String
    public let refreshToken = "demo-refresh-token"
    public let clientID = "hudson-demo-client"
    public let clientSecret = "hudson-demo-secret"
    private let process: Process
    private let directory: TemporaryDirectory
    private var stopped = false

    /// The repository root, found from this file's path (Tests/HudsonTestSupport/…).
    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    public init(_ arguments: [String] = ["--demo"], email: String = "demo@hudson.test") throws {
        directory = TemporaryDirectory()
        let portFile = directory.path("url")
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.repositoryRoot.appendingPathComponent("tools/fake-gmail/fake_gmail.py").path,
                             "--port", "0", "--port-file", portFile, "--account", email] + arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        var found: String?
        while Date() < deadline {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), text.hasPrefix("http") {
                found = text.trimmingCharacters(in: .whitespacesAndNewlines)
                break
            }
            guard process.isRunning else { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        guard let found else {
            process.terminate()
            throw FakeGmailError("the fake Gmail did not start")
        }
        url = found
        self.email = email
    }

    deinit { stop() }

    /// Stops the server at once (the network is "down" from then on): SIGKILL, so the
    /// kernel closes its socket immediately, and no wait on Foundation's process monitor.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        kill(process.processIdentifier, SIGKILL)
        // Wait until the port refuses connections, so "down" really is down.
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, (try? Self.fetch(URLRequest(url: URL(string: url + "/_admin/quota")!))) != nil {
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// The environment that points Hudson at this server. The fake has no per-user
    /// quota unless asked, so the client's own budget is lifted to match.
    public var environment: [String: String] {
        ["HUDSON_GMAIL_URL": url, "HUDSON_OAUTH_TOKEN_URL": url + "/token", "HUDSON_OAUTH_AUTH_URL": url + "/auth",
         "HUDSON_QUOTA_PER_MINUTE": "1000000"]
    }

    /// Google's "installed" client JSON for this server's client.
    public var clientSecretJSON: String {
        """
        {"installed": {"client_id": "\(clientID)", "client_secret": "\(clientSecret)", "auth_uri": "\(url)/auth",
         "token_uri": "\(url)/token", "redirect_uris": ["http://localhost"]}}
        """
    }

    // MARK: - Admin interface

    @discardableResult
    public func admin(_ method: String, _ path: String, _ body: Any? = nil) throws -> Any? {
        var request = URLRequest(url: URL(string: url + "/_admin/" + path)!)
        request.httpMethod = method
        if let body {
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, status) = try Self.fetch(request)
        guard (200..<300).contains(status) else { throw FakeGmailError("admin \(path): HTTP \(status)") }
        return data.isEmpty ? nil : try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    }

    /// Every message: id → (threadId, labelIds, internalDate ms).
    public func messages() throws -> [String: (thread: String, labels: Set<String>, internalDate: Int64)] {
        let state = try admin("GET", "state") as? [String: Any]
        var result: [String: (thread: String, labels: Set<String>, internalDate: Int64)] = [:]
        for message in state?["messages"] as? [[String: Any]] ?? [] {
            guard let id = message["id"] as? String else { continue }
            let date = (message["internalDate"] as? String).flatMap { Int64($0) } ?? (message["internalDate"] as? Int64) ?? 0
            result[id] = (message["threadId"] as? String ?? "", Set(message["labelIds"] as? [String] ?? []), date)
        }
        return result
    }

    /// The API requests logged since the last clear: (method, path, units).
    public func requests() throws -> [(method: String, path: String, status: Int, units: Int)] {
        (try admin("GET", "requests") as? [[String: Any]] ?? []).map {
            ($0["method"] as? String ?? "", $0["path"] as? String ?? "", $0["status"] as? Int ?? 0, $0["units"] as? Int ?? 0)
        }
    }

    public func clearRequests() throws { try admin("DELETE", "requests") }

    public func modify(_ id: String, add: [String] = [], remove: [String] = []) throws {
        try admin("POST", "modify", ["id": id, "add": add, "remove": remove])
    }

    public func faults(_ rules: [[String: Any]]) throws { try admin("POST", "faults", ["rules": rules]) }

    static func fetch(_ request: URLRequest) throws -> (Data, Int) {
        final class Box: @unchecked Sendable { var result: Result<(Data, Int), Error>? }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, error in
            if let error { box.result = .failure(error) } else {
                box.result = .success((data ?? Data(), (response as? HTTPURLResponse)?.statusCode ?? 0))
            }
            done.signal()
        }.resume()
        done.wait()
        return try box.result!.get()
    }

    /// A GET that does not follow redirects: the status and the Location header.
    public static func getWithoutRedirect(_ url: String) throws -> (status: Int, location: String?) {
        final class NoRedirect: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
            func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                            newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
                completionHandler(nil)
            }
        }
        final class Box: @unchecked Sendable { var result: (Int, String?) = (0, nil) }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        let session = URLSession(configuration: .ephemeral, delegate: NoRedirect(), delegateQueue: nil)
        session.dataTask(with: URL(string: url)!) { _, response, _ in
            let http = response as? HTTPURLResponse
            box.result = (http?.statusCode ?? 0, http?.value(forHTTPHeaderField: "Location"))
            done.signal()
        }.resume()
        done.wait()
        return box.result
    }
}

public struct FakeGmailError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
