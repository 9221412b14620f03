/*!
 Where the store and the configuration live (CONTRACT.md "Files"): the first that is
 set wins. This file alone resolves them.
 */
import Glibc

public enum Paths {
    /// `--db PATH`, `$HUDSON_DB`, `$XDG_DATA_HOME/hudson/hudson.sqlite3`,
    /// `~/.local/share/hudson/hudson.sqlite3`.
    public static func store(option: String?, environment: [String: String]) throws -> String {
        if let option, !option.isEmpty { return option }
        if let path = environment["HUDSON_DB"], !path.isEmpty { return path }
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/hudson/hudson.sqlite3" }
        return try home(environment) + "/.local/share/hudson/hudson.sqlite3"
    }

    /// `$HUDSON_CONFIG_DIR`, `$XDG_CONFIG_HOME/hudson`, `~/.config/hudson`.
    public static func configDirectory(environment: [String: String]) throws -> String {
        if let path = environment["HUDSON_CONFIG_DIR"], !path.isEmpty { return path }
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config + "/hudson" }
        return try home(environment) + "/.config/hudson"
    }

    static func home(_ environment: [String: String]) throws -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
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
                throw CommandFailure(.configuration, "\(prefix): cannot create directory: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// The directory part of a path ("." for a bare name).
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
