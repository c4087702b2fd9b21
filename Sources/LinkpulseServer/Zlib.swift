import CZlib

/// Decompression and compression of HTTP bodies with the system zlib.
enum Zlib {
    enum Failure: Error, Equatable {
        /// The inflated body would exceed the limit; inflation stopped there.
        case tooLarge
        /// The compressed data is corrupt or truncated.
        case corrupt
    }

    /// Inflates a gzip or zlib stream (the header decides), stopping as soon as the output
    /// would pass `limit` bytes, so a small "zip bomb" never expands in memory.
    static func inflate(_ input: [UInt8], limit: Int) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        // 15 window bits + 32: detect gzip or zlib headers automatically.
        guard inflateInit2_(&stream, 15 + 32, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .corrupt
        }
        defer { inflateEnd(&stream) }
        var output = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var status: Int32 = Z_OK
        var input = input
        let inputCount = input.count
        try input.withUnsafeMutableBufferPointer { (inBuffer) throws(Failure) in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = UInt32(inputCount)
            repeat {
                let produced = chunk.withUnsafeMutableBufferPointer { outBuffer in
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = UInt32(outBuffer.count)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return outBuffer.count - Int(stream.avail_out)
                }
                guard status == Z_OK || status == Z_STREAM_END || (status == Z_BUF_ERROR && produced > 0) else {
                    throw .corrupt
                }
                if output.count + produced > limit { throw .tooLarge }
                output.append(contentsOf: chunk[0..<produced])
                if status == Z_OK, produced == 0, stream.avail_in == 0 { throw .corrupt }  // truncated
            } while status != Z_STREAM_END
        }
        return output
    }

    /// Compresses bytes as a zlib stream (what a PNG's IDAT chunk holds), at the best
    /// compression: for small images.
    static func zlibStream(_ input: [UInt8]) -> [UInt8] {
        var length = compressBound(UInt(input.count))
        var output = [UInt8](repeating: 0, count: Int(length))
        let status = output.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer { compress2(out.baseAddress, &length, $0.baseAddress, UInt($0.count), Z_BEST_COMPRESSION) }
        }
        precondition(status == Z_OK, "compressBound sized the buffer")
        output.removeSubrange(Int(length)...)
        return output
    }

    /// Compresses bytes as a gzip stream (default level).
    static func gzip(_ input: [UInt8]) -> [UInt8] {
        var stream = z_stream()
        // 15 window bits + 16: write a gzip header and trailer.
        guard deflateInit2_(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                            zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return input }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 32)
        var input = input
        let inputCount = input.count
        let written = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = UInt32(inputCount)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = UInt32(outBuffer.count)
                _ = deflate(&stream, Z_FINISH)
                return outBuffer.count - Int(stream.avail_out)
            }
        }
        output.removeSubrange(written...)
        return output
    }
}

/// A gzip stream compressed chunk by chunk, for exports written or sent as they are read.
/// Not thread-safe; one owner at a time.
final class GzipStream {
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private var output = [UInt8](repeating: 0, count: 64 << 10)
    private var finished = false

    /// - Parameter level: 1 (fastest) to 9 (smallest); 1 keeps streamed exports CPU-cheap.
    init(level: Int32 = 1) {
        stream.initialize(to: z_stream())
        // 15 window bits + 16: a gzip header and trailer. Fails only without memory.
        let status = deflateInit2_(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                                   zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK, "zlib deflateInit2 failed: \(status)")
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    /// Compresses `input`; returns whatever compressed bytes are ready (maybe none).
    func compress(_ input: [UInt8]) -> [UInt8] {
        run(input, flush: Z_NO_FLUSH)
    }

    /// Ends the stream; returns the last compressed bytes and the trailer.
    func finish() -> [UInt8] {
        guard !finished else { return [] }
        finished = true
        return run([], flush: Z_FINISH)
    }

    private func run(_ input: [UInt8], flush: Int32) -> [UInt8] {
        var result: [UInt8] = []
        input.withUnsafeBufferPointer { inBuffer in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: inBuffer.baseAddress)
            stream.pointee.avail_in = UInt32(inBuffer.count)
            var status: Int32 = Z_OK
            repeat {
                let produced = output.withUnsafeMutableBufferPointer { outBuffer in
                    stream.pointee.next_out = outBuffer.baseAddress
                    stream.pointee.avail_out = UInt32(outBuffer.count)
                    status = deflate(stream, flush)
                    return outBuffer.count - Int(stream.pointee.avail_out)
                }
                result.append(contentsOf: output[0..<produced])
                // More output pending while the buffer filled up; done when input is consumed
                // (or, when finishing, at the stream's end).
                if flush == Z_FINISH ? status == Z_STREAM_END : (stream.pointee.avail_out != 0) { break }
            } while status == Z_OK || status == Z_BUF_ERROR
        }
        return result
    }
}
