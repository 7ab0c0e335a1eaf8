import NIOCore
import OrientationCore

/// Parses a request line: a JSON object with `id` (number or string) and `op` (string).
public struct Request: Sendable {
    public let id: JSONValue
    public let op: String
    public let body: JSONReader

    /// A line that is not a usable request: the error to reply with, and the id (null when unreadable).
    public struct Rejection: Error, Sendable {
        public let id: JSONValue
        public let error: ProtocolError
    }

    /// Fails with a `bad-request` error that names the problem; `id` is null when it could not be read.
    public static func parse(_ bytes: ByteBuffer) -> Result<Request, Rejection> {
        guard let text = bytes.getString(at: bytes.readerIndex, length: bytes.readableBytes),
            text.utf8.elementsEqual(bytes.readableBytesView)
        else {
            return .failure(Rejection(id: .null, error: .badRequest("the line is not valid UTF-8")))
        }
        let value: JSONValue
        do {
            value = try JSONValue.parse(Array(text.utf8))
        } catch {
            return .failure(Rejection(id: .null, error: .badRequest("the line is not a JSON object")))
        }
        guard case .object = value else {
            return .failure(Rejection(id: .null, error: .badRequest("the line is not a JSON object")))
        }
        let reader = JSONReader(value)
        let id = value["id"] ?? .null
        switch id {
        case .number, .string: break
        case .null: return .failure(Rejection(id: .null, error: .badRequest("missing field id (a number or string)")))
        default: return .failure(Rejection(id: .null, error: .badRequest("field id must be a number or a string")))
        }
        guard let opValue = value["op"] else {
            return .failure(Rejection(id: id, error: .badRequest("missing field op")))
        }
        guard case .string(let op) = opValue else {
            return .failure(Rejection(id: id, error: .badRequest("field op must be a string")))
        }
        return .success(Request(id: id, op: op, body: reader))
    }
}

/// A request as the daemon acts on it: the op and its fields, read and checked. Everything a
/// front end needs to know about JSON ends here; the hub sees only these values.
public enum ClientRequest: Sendable, Hashable {
    case get
    /// `motionRate`: the rate asked for the `motion` topic (Hz, 1–100), nil for the default.
    case subscribe([Topic], motionRate: Double? = nil)
    case unsubscribe([Topic])
    case lock(Bool)
    /// Never empty.
    case setSystemSupportedOrientations(InterfaceOrientationMask)
    /// nil: one scene of the daemon's idiom, launched at once.
    case openSession(initial: ResolverState?)
    case closeSession
    case getSession
    /// A `scene.*` op and the resolver action it performs on the connection's session.
    case scene(Operation, ResolverAction)

    public var operation: Operation {
        switch self {
        case .get: .get
        case .subscribe: .subscribe
        case .unsubscribe: .unsubscribe
        case .lock: .lock
        case .setSystemSupportedOrientations: .setSystemSupportedOrientations
        case .openSession: .openSession
        case .closeSession: .closeSession
        case .getSession: .getSession
        case .scene(let operation, _): operation
        }
    }
}

extension Request {
    /// Reads the op's fields; a missing or wrong field is a `bad-request` that names it, an op
    /// that does not exist is `unknown-op`.
    public func decode() -> Result<ClientRequest, ProtocolError> {
        guard let operation = Operation(rawValue: op) else { return .failure(.unknownOperation(op)) }
        do throws(JSONFieldError) {
            return try decode(operation)
        } catch {
            return .failure(.badRequest("\(error.path): \(error.problem)"))
        }
    }

    private func decode(_ operation: Operation) throws(JSONFieldError) -> Result<ClientRequest, ProtocolError> {
        switch operation {
        case .get: return .success(.get)
        case .subscribe:
            let rateField = try body.optional("rate")
            let rate = try rateField.map { reader throws(JSONFieldError) in try reader.number() }
            if let rate, let rateField, !(rate >= MotionRate.minimum && rate <= MotionRate.maximum) {
                // The field named (`rate: …`), not the document.
                throw rateField.fail(
                    "must be from \(Int(MotionRate.minimum)) to \(Int(MotionRate.maximum)) Hz, got \(rate)")
            }
            return .success(.subscribe(try topics(), motionRate: rate))
        case .unsubscribe: return .success(.unsubscribe(try topics()))
        case .lock: return .success(.lock(try body.required("on").bool()))
        case .setSystemSupportedOrientations:
            let mask = try ResolverJSON.mask(try body.required("mask"))
            guard !mask.isEmpty else { throw body.fail("mask must not be empty") }
            return .success(.setSystemSupportedOrientations(mask))
        case .openSession:
            return .success(
                .openSession(
                    initial: try body.optional("initial").map { reader throws(JSONFieldError) in
                        try ResolverJSON.state(reader)
                    }))
        case .closeSession: return .success(.closeSession)
        case .getSession: return .success(.getSession)
        default:
            guard let type = operation.sceneActionType else { return .failure(.unknownOperation(op)) }
            guard case .object(let members) = body.value else {
                return .failure(.badRequest("the request is not an object"))
            }
            // `id` is the request's; scene.update names its scene with `scene` (the action's `id`).
            var fields = members.filter { $0.key != "id" && $0.key != "op" && $0.key != "type" && $0.key != "scene" }
            if operation == .sceneUpdate {
                guard case .string(let scene)? = body.value["scene"] else {
                    return .failure(.badRequest("\(op): missing field scene (the scene's id)"))
                }
                fields.append(("id", .string(scene)))
            }
            let action = try ResolverJSON.action(JSONReader(.object([("type", .string(type))] + fields)))
            return .success(.scene(operation, action))
        }
    }

    /// `topics`: an array of subscribable topic names.
    private func topics() throws(JSONFieldError) -> [Topic] {
        var topics: [Topic] = []
        for element in try body.required("topics").array() {
            let name = try element.string()
            guard let topic = Topic(rawValue: name), Topic.subscribable.contains(topic) else {
                throw element.fail(
                    "unknown topic \"\(name)\" (topics: \(Topic.subscribable.map(\.rawValue).joined(separator: ", ")))")
            }
            topics.append(topic)
        }
        return topics
    }
}
