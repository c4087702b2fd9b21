import CQRencode
import CZlib

/// A QR code of a text (a link's short URL), encoded by the system libqrencode, drawn as SVG or
/// PNG with the four-module quiet zone the standard asks for around it.
struct QRCode: Sendable, Equatable {
    /// Modules per side, without the quiet zone.
    let size: Int
    /// Row by row, `true` for a dark module.
    let dark: [Bool]

    /// Modules of white around the symbol (ISO/IEC 18004's quiet zone).
    static let quietZone = 4

    /// Encodes `text` in byte mode with error correction level M (15% of the symbol may be lost),
    /// in the smallest version that holds it. Nil when the text is too long for any version.
    init?(_ text: String) {
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        size = width
        // libqrencode's bit 0 of each module byte says dark; the other bits describe its role.
        dark = (0..<width * width).map { code.pointee.data[$0] & 1 == 1 }
    }

    func isDark(row: Int, column: Int) -> Bool { dark[row * size + column] }

    /// An SVG document: one path of the dark runs of each row, on a white square, that scales
    /// to any size (`viewBox` in modules).
    func svg() -> String {
        let side = size + 2 * Self.quietZone
        var path = ""
        for row in 0..<size {
            var column = 0
            while column < size {
                guard isDark(row: row, column: column) else { column += 1; continue }
                let start = column
                while column < size, isDark(row: row, column: column) { column += 1 }
                path += "M\(start + Self.quietZone) \(row + Self.quietZone)h\(column - start)v1h-\(column - start)z"
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" shape-rendering="crispEdges">\
            <rect width="\(side)" height="\(side)" fill="#fff"/><path fill="#000" d="\(path)"/></svg>

            """
    }

    /// A one-bit greyscale PNG, `scale` pixels per module.
    func png(scale: Int) -> [UInt8] {
        let pixels = (size + 2 * Self.quietZone) * scale
        let rowBytes = (pixels + 7) / 8
        var raw = [UInt8]()
        raw.reserveCapacity((rowBytes + 1) * pixels)
        for y in 0..<pixels {
            raw.append(0)  // filter type None
            let row = y / scale - Self.quietZone
            var byte: UInt8 = 0
            for x in 0..<pixels {
                let column = x / scale - Self.quietZone
                let isDark = (0..<size).contains(row) && (0..<size).contains(column) && isDark(row: row, column: column)
                // In greyscale a 0 bit is black.
                if !isDark { byte |= 0x80 >> UInt8(x % 8) }
                if x % 8 == 7 || x == pixels - 1 {
                    raw.append(byte)
                    byte = 0
                }
            }
        }
        var header = [UInt8]()
        header.appendBigEndian(UInt32(pixels))
        header.appendBigEndian(UInt32(pixels))
        header += [1, 0, 0, 0, 0]  // bit depth 1, greyscale, deflate, adaptive filters, no interlace
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        Self.appendChunk("IHDR", header, to: &file)
        Self.appendChunk("IDAT", Zlib.zlibStream(raw), to: &file)
        Self.appendChunk("IEND", [], to: &file)
        return file
    }

    private static func appendChunk(_ type: String, _ data: [UInt8], to file: inout [UInt8]) {
        file.appendBigEndian(UInt32(data.count))
        let typed = Array(type.utf8) + data
        file += typed
        let checksum = typed.withUnsafeBufferPointer { crc32(0, $0.baseAddress, UInt32($0.count)) }
        file.appendBigEndian(UInt32(checksum))
    }
}

private extension [UInt8] {
    mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    }
}
