/*!
 Where the store and the configuration live (CONTRACT.md "Files"): the first that is
 set wins. This file alone resolves them.
 */
import Glibc
import HudsonOutput

public enum Paths {
    /// `--db PATH`, `$HUDSON_DB`, `$XDG_DATA_HOME/hudson/hudson.sqlite3`,
    /// `~/.local/share/hudson/hudson.sqlite3`.
    /// A variable in `undecodable` held bytes that are not UTF-8 (`Main` keeps them out of
    /// the text it hands on): the path it names cannot be spelled, so it is refused (78)
    /// rather than repaired into the name of another file.
    public static func store(option: String?, environment: [String: String], undecodable: Set<String> = []) throws -> String {
        if let option, !option.isEmpty { return option }
        if let path = try variable("HUDSON_DB", environment, undecodable), !path.isEmpty { return path }
        if let data = try variable("XDG_DATA_HOME", environment, undecodable), data.hasPrefix("/") { return data + "/hudson/hudson.sqlite3" }
        return try home(environment, undecodable) + "/.local/share/hudson/hudson.sqlite3"
    }

    /// `$HUDSON_CONFIG_DIR`, `$XDG_CONFIG_HOME/hudson`, `~/.config/hudson`.
    public static func configDirectory(environment: [String: String], undecodable: Set<String> = []) throws -> String {
        if let path = try variable("HUDSON_CONFIG_DIR", environment, undecodable), !path.isEmpty { return path }
        if let config = try variable("XDG_CONFIG_HOME", environment, undecodable), config.hasPrefix("/") { return config + "/hudson" }
        return try home(environment, undecodable) + "/.config/hudson"
    }

    /// The value of `name`, refused when it was not UTF-8.
    static func variable(_ name: String, _ environment: [String: String], _ undecodable: Set<String>) throws -> String? {
        if undecodable.contains(name) {
            throw CommandFailure(.configuration, "\(name) is not valid UTF-8; Hudson cannot name that path (set it in UTF-8)")
        }
        return environment[name]
    }

    static func home(_ environment: [String: String], _ undecodable: Set<String> = []) throws -> String {
        if let home = try variable("HOME", environment, undecodable), !home.isEmpty { return home }
        if let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir {
            return String(cString: directory)
        }
        throw CommandFailure(.configuration, "cannot find the home directory; set HUDSON_DB and HUDSON_CONFIG_DIR")
    }

    /// Creates `path` and its missing parents with mode 0700 (the store's directory).
    public static func makeDirectories(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                let reason = String(cString: strerror(errno))
                throw CommandFailure(.configuration, "\(TerminalSafety.quoted(prefix, limit: 200)): cannot create directory: \(reason)")
            }
        }
    }

    /// The directory part of a path ("." for a bare name).
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
