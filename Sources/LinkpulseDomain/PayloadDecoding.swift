import Foundation

/// Decodes the events framed by `IngestBody.frame` into payloads, one result per event in body
/// order: the payload, or why it could not be read (framing rejection, broken JSON).
public enum PayloadDecoding {
    public static func decode(_ body: [UInt8], _ framed: [FramedEvent]) -> [Result<EventPayload, EventError>] {
        let decoder = JSONDecoder()
        return framed.map { event in
            if let rejection = event.rejection { return .failure(rejection) }
            do {
                return .success(try decoder.decode(EventPayload.self, from: Data(body[event.range])))
            } catch {
                return .failure(EventError(
                    code: "invalid_json", field: nil,
                    message: "This event is not valid JSON: \(describe(error))"))
            }
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
