import HudsonOutput

/// A call's arguments, checked against the tool's schema: a member of the wrong type, or
/// one the tool does not take, is a protocol fault (JSON-RPC -32602), not a tool error.
struct Arguments {
    let members: [(String, JSONValue)]

    init(_ value: JSONValue?) throws {
        guard let value else {
            members = []
            return
        }
        guard let members = value.objectMembers else { throw RPCFault.invalidParams("arguments must be an object") }
        self.members = members
    }

    private func value(_ key: String) -> JSONValue? {
        guard let value = members.first(where: { $0.0 == key })?.1 else { return nil }
        return value == .null ? nil : value
    }

    /// Refuses members outside `known`.
    func only(_ known: [String]) throws {
        for (key, _) in members where !known.contains(key) {
            throw RPCFault.invalidParams("unknown argument \(TerminalSafety.quoted(key, limit: 40)) (takes \(known.joined(separator: ", ")))")
        }
    }

    func string(_ key: String) throws -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else { throw RPCFault.invalidParams("\(key) must be a string") }
        return text
    }

    func requiredString(_ key: String) throws -> String {
        guard let text = try string(key) else { throw RPCFault.invalidParams("\(key) is required") }
        return text
    }

    func int(_ key: String, range: ClosedRange<Int>) throws -> Int? {
        guard let value = value(key) else { return nil }
        let number: Int
        switch value {
        case .int(let integer) where integer >= Int64(range.lowerBound) && integer <= Int64(range.upperBound):
            number = Int(integer)
        case .double(let double) where double.rounded() == double && double >= Double(range.lowerBound)
                                        && double <= Double(range.upperBound):
            number = Int(double)
        default:
            throw RPCFault.invalidParams("\(key) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    func bool(_ key: String) throws -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else { throw RPCFault.invalidParams("\(key) must be true or false") }
        return flag
    }

    func strings(_ key: String) throws -> [String]? {
        guard let value = value(key) else { return nil }
        if case .string(let one) = value { return [one] }
        guard case .array(let items) = value else { throw RPCFault.invalidParams("\(key) must be a list of strings") }
        return try items.map {
            guard case .string(let text) = $0 else { throw RPCFault.invalidParams("\(key) must be a list of strings") }
            return text
        }
    }
}
