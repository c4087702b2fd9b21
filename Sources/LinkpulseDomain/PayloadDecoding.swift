import Foundation

/// Decodes the events framed by `IngestBody.frame` into payloads, one result per event in body
/// order: the payload, or why it could not be read (framing rejection, broken JSON).
///
/// Well-formed events go through `FastEventParser`. The rest (the parser declines anything
/// unusual) are decoded by `JSONDecoder` in ONE call, as a JSON array assembled from their byte
/// ranges, since the decoder's fixed cost per call exceeds the cost of a small event.
/// `EventPayload` never fails on a field, so that call fails only when some event is not JSON;
/// then each event is decoded on its own to find which and to report the decoder's reason.
public enum PayloadDecoding {
    public static func decode(_ body: [UInt8], _ framed: [FramedEvent]) -> [Result<EventPayload, EventError>] {
        var results: [Result<EventPayload, EventError>] = []
        results.reserveCapacity(framed.count)
        var slow: [Int] = []
        body.withUnsafeBufferPointer { buffer in
            for (index, event) in framed.enumerated() {
                if let rejection = event.rejection {
                    results.append(.failure(rejection))
                } else if let payload = FastEventParser.parse(UnsafeBufferPointer(rebasing: buffer[event.range])) {
                    results.append(.success(payload))
                } else {
                    results.append(.failure(EventError(code: "invalid_json", field: nil, message: "")))
                    slow.append(index)
                }
            }
        }
        guard !slow.isEmpty else { return results }
        let decoder = JSONDecoder()
        let candidates = slow
        if candidates.count == 1 {
            let index = candidates[0]
            results[index] = decodeOne(decoder, Data(body[framed[index].range]))
            return results
        }
        guard !candidates.isEmpty else { return results }

        var joined = Data()
        joined.reserveCapacity(candidates.reduce(2) { $0 + framed[$1].range.count + 1 })
        joined.append(UInt8(ascii: "["))
        for (n, index) in candidates.enumerated() {
            if n > 0 { joined.append(UInt8(ascii: ",")) }
            joined.append(contentsOf: body[framed[index].range])
        }
        joined.append(UInt8(ascii: "]"))
        if let payloads = try? decoder.decode([EventPayload].self, from: joined), payloads.count == candidates.count {
            for (payload, index) in zip(payloads, candidates) { results[index] = .success(payload) }
        } else {
            for index in candidates { results[index] = decodeOne(decoder, Data(body[framed[index].range])) }
        }
        return results
    }

    static func decodeOne(_ decoder: JSONDecoder, _ data: Data) -> Result<EventPayload, EventError> {
        do {
            return .success(try decoder.decode(EventPayload.self, from: data))
        } catch {
            return .failure(EventError(code: "invalid_json", field: nil, message: "This event is not valid JSON: \(describe(error))"))
        }
    }

    static func describe(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            let underlying = (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String
            return underlying ?? context.debugDescription
        }
        return "\(error)"
    }
}
