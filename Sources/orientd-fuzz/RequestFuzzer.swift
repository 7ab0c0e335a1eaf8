import NIOCore
import NIOEmbedded
import OrientationCore
import OrientationProtocol

/// The fuzz target for the request decoder: bytes as a client would send them, split into lines by
/// the daemon's `LineFrameDecoder`, each line parsed by `Request.parse` and every accepted request
/// decoded into the ``ClientRequest`` the hub acts on.
///
/// Built two ways:
/// - `make fuzz` (`-DFUZZING`, AddressSanitizer and coverage instrumentation, libFuzzer's driver):
///   libFuzzer generates the inputs.
/// - a plain build: `orientd-fuzz FILE|DIR…` runs every input file once (the seed corpus in
///   `Tests/Fixtures/fuzz-request` and any crash libFuzzer saved), so `make test` replays them.
enum RequestFuzzer {
    static func run(_ input: UnsafeRawBufferPointer) {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(LineFrameDecoder(maximumLength: 4096)))
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        // Split the input at a byte chosen by its length, so the decoder also sees partial reads.
        let split = input.isEmpty ? 0 : input.count / 2
        for part in [input[..<split], input[split...]] where !part.isEmpty {
            guard (try? channel.writeInbound(ByteBuffer(bytes: UnsafeRawBufferPointer(rebasing: part)))) != nil else {
                return
            }
            while let line = try? channel.readInbound(as: ByteBuffer.self) {
                guard case .success(let request) = Request.parse(line) else { continue }
                exercise(request)
            }
        }
    }

    /// Decodes the request as the socket front end does; a refusal is serialized as its reply would be.
    static func exercise(_ request: Request) {
        switch request.decode() {
        case .success(let decoded):
            if case .openSession(let initial?) = decoded { _ = SessionSnapshot(initial) }
            _ = decoded.operation.rawValue
        case .failure(let error):
            _ = ServerMessage.reply(id: request.id, error: error).serialized
        }
    }
}

#if FUZZING
import CLinux
import Glibc

/// libFuzzer's driver runs the inputs (SwiftPM gives an executable its own entry point, so the
/// driver is linked without its `main` and started from here).
@main
struct FuzzDriver {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(
            LLVMFuzzerRunDriver(&argc, &argv) { data, size in
                RequestFuzzer.run(UnsafeRawBufferPointer(start: data, count: Int(size)))
                return 0
            })
    }
}
#else
import Glibc

@main
struct ReplayInputs {
    static func main() {
        var files: [String] = []
        for argument in CommandLine.arguments.dropFirst() {
            if argument == "-h" || argument == "--help" {
                print("usage: orientd-fuzz FILE|DIR…   (runs each input once; `make fuzz` builds the libFuzzer target)")
                return
            }
            if let directory = opendir(argument) {
                while let entry = readdir(directory) {
                    let name = withUnsafeBytes(of: entry.pointee.d_name) {
                        String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                    }
                    if !name.hasPrefix(".") { files.append(argument + "/" + name) }
                }
                closedir(directory)
            } else {
                files.append(argument)
            }
        }
        for file in files.sorted() {
            guard let handle = fopen(file, "rb") else {
                let message = "orientd-fuzz: cannot read \(file): \(String(cString: strerror(errno)))\n"
                _ = message.withCString { write(2, $0, strlen($0)) }
                exit(66)
            }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while case let count = fread(&chunk, 1, chunk.count, handle), count > 0 { bytes += chunk[0..<count] }
            fclose(handle)
            bytes.withUnsafeBytes { RequestFuzzer.run($0) }
        }
        print("orientd-fuzz: \(files.count) inputs ran")
    }
}
#endif
