import Foundation

/// The files of a PocketSphinx acoustic model folder that adaptation reads and writes, in the
/// formats sphinxtrain's tools expect.
///
/// PocketSphinx reads its mixture weights from `sendump` (quantized, 8 bits each), while
/// sphinxtrain's `bw` and `map_adapt` read `mixture_weights` (the Sphinx-3 binary parameter
/// format, 32-bit floats); Debian's en-us model ships only `sendump`. ``mixtureWeights(fromSendump:)``
/// makes the one from the other.
enum AcousticModelFiles {
    /// A model file that cannot be used, naming the file.
    struct FormatError: Error, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "\(path): \(reason)" }
    }

    /// The settings of `feat.params` (`-feat 1s_c_d_dd`, `-cmn batch`, `-model ptm`, …) by flag.
    static func featureParameters(in modelDirectory: String) throws(FormatError) -> [String: String] {
        let path = modelDirectory + "/feat.params"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw FormatError(path: path, reason: "cannot be read")
        }
        var parameters: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, fields[0].hasPrefix("-") else { continue }
            parameters[String(fields[0])] = String(fields[1])
        }
        return parameters
    }

    /// Reads `sendump` and returns the mixture weights in the Sphinx-3 binary format.
    ///
    /// `sendump` holds a header of length-prefixed strings, then the number of codewords and of
    /// senones, then for each feature stream and each codeword one byte per senone: the weight's
    /// negated log (base 1.0001) shifted right by `mixw_shift` bits (10 unless the header says).
    static func mixtureWeights(fromSendump path: String) throws(FormatError) -> Data {
        guard let data = FileManager.default.contents(atPath: path) else { throw FormatError(path: path, reason: "cannot be read") }
        var reader = LittleEndianReader(data: data)
        var header: [String: Int] = [:]
        var first = true
        while true {
            guard let length = reader.uint32() else { throw FormatError(path: path, reason: "ends inside its header") }
            if length == 0 { break }
            guard length < 65_536, let bytes = reader.bytes(Int(length)) else {
                throw FormatError(path: path, reason: "has a header string of \(length) bytes at byte \(reader.offset - 4); not a sendump file")
            }
            defer { first = false }
            if first { continue }  // the title
            let fields = String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self).split(separator: " ")
            if fields.count == 2, let value = Int(fields[1]) { header[String(fields[0])] = value }
        }
        guard header["cluster_count", default: 0] == 0 else {
            throw FormatError(path: path, reason: "has clustered weights (cluster_count \(header["cluster_count"]!)), which Heed cannot read")
        }
        let features = header["feature_count", default: 0]
        let shift = header["mixw_shift", default: 10]
        guard let codewords = reader.uint32().map(Int.init), let senones = reader.uint32().map(Int.init), features > 0,
            codewords > 0, senones > 0, reader.remaining == features * codewords * senones
        else {
            throw FormatError(path: path, reason: "its sizes do not match its length (\(data.count) bytes)")
        }
        // The file's order is feature, codeword, senone; the parameter file's is senone, feature, codeword.
        var weights = [Float](repeating: 0, count: senones * features * codewords)
        let logBase = log(1.0001)
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var offset = reader.offset
            for feature in 0..<features {
                for codeword in 0..<codewords {
                    for senone in 0..<senones {
                        let quantized = Double(Int(bytes[offset]) << shift)
                        weights[(senone * features + feature) * codewords + codeword] = Float(exp(-quantized * logBase))
                        offset += 1
                    }
                }
            }
        }
        // Quantization leaves each distribution a little off one: normalise it.
        for start in stride(from: 0, to: weights.count, by: codewords) {
            let sum = weights[start..<(start + codewords)].reduce(0, +)
            if sum > 0 { for index in start..<(start + codewords) { weights[index] /= sum } }
        }
        return parameterFile(dimensions: [senones, features, codewords], values: weights)
    }

    /// A Sphinx-3 binary parameter file: `s3`, `version 1.0`, `endhdr` (padded so the data starts
    /// on a 4-byte boundary), the byte-order mark 0x11223344, the dimensions, the value count and
    /// the values, little-endian.
    static func parameterFile(dimensions: [Int], values: [Float]) -> Data {
        var head = "s3\nversion 1.0\n"
        let misalignment = (head.utf8.count + "endhdr\n".utf8.count) % 4
        if misalignment != 0 { head += String(repeating: " ", count: 4 - misalignment) }
        head += "endhdr\n"
        var data = Data(head.utf8)
        func append(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        append(0x1122_3344)
        for dimension in dimensions { append(UInt32(dimension)) }
        append(UInt32(values.count))
        for value in values { append(value.bitPattern) }
        return data
    }

    /// A feature file as sphinxtrain reads it: the number of values, then the values (32-bit
    /// floats, little-endian; the reader tells the byte order from the count and the length).
    static func featureFile(_ values: [Float]) -> Data {
        var data = Data(capacity: 4 + 4 * values.count)
        withUnsafeBytes(of: UInt32(values.count).littleEndian) { data.append(contentsOf: $0) }
        for value in values { withUnsafeBytes(of: value.bitPattern.littleEndian) { data.append(contentsOf: $0) } }
        return data
    }
}

/// Reads little-endian numbers from the front of some bytes.
private struct LittleEndianReader {
    let data: Data
    private(set) var offset = 0

    init(data: Data) { self.data = data }

    var remaining: Int { data.count - offset }

    mutating func bytes(_ count: Int) -> Data? {
        guard count >= 0, remaining >= count else { return nil }
        defer { offset += count }
        return data.subdata(in: (data.startIndex + offset)..<(data.startIndex + offset + count))
    }

    mutating func uint32() -> UInt32? {
        bytes(4).map { $0.reduce(into: UInt32(0)) { value, byte in value = value >> 8 | UInt32(byte) << 24 } }
    }
}
