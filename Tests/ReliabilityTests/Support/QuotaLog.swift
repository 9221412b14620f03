// The fake Gmail's request log read as quota (SharedQuotaTests): the units each request was
// charged and when, the 429s, and the most units any rolling 60 s window held.
import Foundation
import HudsonTestSupport
import SQLite

struct QuotaLog {
    struct Request {
        var method: String
        var path: String
        var status: Int
        var units: Int
        var batch: Bool
        /// Wall-clock seconds at which the fake began the request.
        var time: Double
    }

    let requests: [Request]

    init(_ fake: FakeGmail) throws {
        let raw = try fake.admin("GET", "requests") as? [[String: Any]] ?? []
        requests = raw.map {
            Request(method: $0["method"] as? String ?? "", path: $0["path"] as? String ?? "", status: $0["status"] as? Int ?? 0,
                    units: $0["units"] as? Int ?? 0, batch: $0["batch"] as? Bool ?? false,
                    time: ($0["time"] as? Double) ?? Double($0["time"] as? Int ?? 0))
        }
    }

    /// Units charged over the whole log.
    var totalUnits: Int { requests.reduce(0) { $0 + $1.units } }

    /// The requests the per-user quota turned away.
    var rateLimited: [Request] { requests.filter { $0.status == 429 } }

    /// The most units charged within any rolling window of `seconds` (a window ending at each
    /// charged request, that request included), and where it ends.
    func worstWindow(seconds: Double = 60) -> (units: Int, end: Double) {
        let charged = requests.filter { $0.units > 0 }.sorted { $0.time < $1.time }
        var worst = (units: 0, end: 0.0)
        var start = 0
        var sum = 0
        for request in charged {
            sum += request.units
            while charged[start].time <= request.time - seconds {
                sum -= charged[start].units
                start += 1
            }
            if sum > worst.units { worst = (sum, request.time) }
        }
        return worst
    }

    /// Seconds from the first request to the last.
    var span: Double {
        guard let first = requests.map(\.time).min(), let last = requests.map(\.time).max() else { return 0 }
        return last - first
    }

    /// Gmail ids of the stored messages, and of those whose bodies the store does not hold
    /// yet, newest first.
    static func messages(store path: String) throws -> (all: [String], bodiless: [String]) {
        let db = try Connection(path: path, options: ConnectionOptions(access: .readOnly))
        let rows = try db.map("SELECT gmail_id, body_state FROM messages ORDER BY internal_date DESC") { ($0.string(0), $0.int(1)) }
        return (rows.map(\.0), rows.filter { $0.1 == 0 }.map(\.0))
    }
}
