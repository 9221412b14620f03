/*!
 SQL functions written in Swift: a deterministic function of one text argument, defined on
 one connection (https://sqlite.org/c3ref/create_function.html). The store uses one to
 index text as it is shown; every connection that fires the store's triggers or reads its
 full-text content defines it, so SQLite never meets a schema it cannot run.
 */
import CSQLite

/// The Swift closure behind a function, kept alive by SQLite until the connection drops it.
private final class TextFunction {
    let body: (String) -> String
    init(_ body: @escaping (String) -> String) { self.body = body }
}

extension Connection {
    /// Defines `name(text)`: NULL gives NULL, anything else is read as UTF-8 text and
    /// passed to `body`. Deterministic and innocuous, so it may appear in views, triggers
    /// and indexes.
    public func defineTextFunction(_ name: String, _ body: @escaping (String) -> String) throws {
        let box = Unmanaged.passRetained(TextFunction(body)).toOpaque()
        let rc = sqlite3_create_function_v2(
            handle, name, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, box,
            { context, _, arguments in
                let function = Unmanaged<TextFunction>.fromOpaque(sqlite3_user_data(context)).takeUnretainedValue()
                guard let argument = arguments?[0], sqlite3_value_type(argument) != SQLITE_NULL,
                      let text = sqlite3_value_text(argument) else {
                    sqlite3_result_null(context)
                    return
                }
                let input = String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(argument))),
                                   as: UTF8.self)
                let output = function.body(input)
                if output == input {
                    sqlite3_result_value(context, argument)  // unchanged: no copy back
                    return
                }
                var bytes = Array(output.utf8)
                bytes.append(0)
                bytes.withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) {
                        sqlite3_result_text(context, $0.baseAddress, Int32(buffer.count - 1), hudson_sqlite3_transient())
                    }
                }
            },
            nil, nil,
            { pointer in
                if let pointer { Unmanaged<TextFunction>.fromOpaque(pointer).release() }
            })
        // On failure SQLite has already called the destructor above, which released `box`.
        guard rc == SQLITE_OK else { throw error(code: rc) }
    }
}
