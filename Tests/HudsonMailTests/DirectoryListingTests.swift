// DirectoryListing: a directory's names read in place. glibc's readdir(3) packs records of
// d_reclen bytes into one buffer; copying a record's whole `d_name` (256 bytes) read past
// the buffer's end and crashed hd-export in CI (SIGSEGV in memcpy, a Maildir of 2,000 files).
import Foundation
import Glibc
import Testing
import DirectoryListing

@Suite("DirectoryListing: every name, read where it lies")
struct DirectoryListingTests {
    @Test("a record that ends where readable memory ends is read without touching the next page")
    func recordAtTheEndOfReadableMemory() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let memory = try #require(mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        #expect(memory != MAP_FAILED)
        defer { munmap(memory, 2 * page) }
        // The second page unreadable: a read past the record's NUL faults at once.
        #expect(mprotect(memory + page, page, PROT_NONE) == 0)
        let nameOffset = try #require(MemoryLayout<dirent>.offset(of: \dirent.d_name))
        let name = Array("1763593075.hudson.1:2,S".utf8)
        let recordLength = nameOffset + name.count + 1
        let record = memory + page - recordLength
        memset(record, 0, recordLength)
        record.storeBytes(of: UInt16(recordLength), toByteOffset: MemoryLayout<dirent>.offset(of: \dirent.d_reclen)!, as: UInt16.self)
        (record + nameOffset).copyMemory(from: name, byteCount: name.count)
        let read = DirectoryListing.name(of: record.assumingMemoryBound(to: dirent.self))
        #expect(Array(read) == name)
    }

    @Test("every name of a directory: every length to 255 bytes, bytes that are not UTF-8, no . or ..")
    func everyName() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hudson-listing-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        #expect(mkdir(directory, 0o700) == 0)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var expected: Set<[UInt8]> = []
        for length in 1...255 {
            let name = Array(repeating: UInt8(ascii: "a") + UInt8(length % 26), count: length)
            expected.insert(name)
        }
        // More names than one buffer of glibc's holds (32 KiB), so records end at its end.
        for index in 0..<2_000 { expected.insert(Array("\(1_763_593_075 + index).hudson.\(index):2,S".utf8)) }
        expected.insert([0x66, 0xFF, 0xFE, 0x67])  // not UTF-8: listed as its bytes
        for name in expected {
            let path = Array(directory.utf8) + [UInt8(ascii: "/")] + name + [0]
            let descriptor = path.withUnsafeBufferPointer {
                $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600) }
            }
            #expect(descriptor >= 0)
            close(descriptor)
        }
        let stream = try #require(opendir(directory))
        defer { closedir(stream) }
        var listed: [[UInt8]] = []
        DirectoryListing.forEachName(in: stream) { listed.append(Array($0)) }
        #expect(listed.count == expected.count)
        #expect(Set(listed) == expected)
    }
}
