import OrientationCore

/// The JSON forms of the resolver's inputs and outputs, as the vector schema (resolver.md §1) writes
/// them: masks as arrays of names, nodes as objects with `kind`, actions as objects with `type`.
public enum ResolverJSON {
    // MARK: reading

    /// A mask: an array of names OR-ed together (`[]` is empty). Null is the caller's "default".
    public static func mask(_ reader: JSONReader) throws(JSONFieldError) -> InterfaceOrientationMask {
        var mask: InterfaceOrientationMask = []
        for element in try reader.array() {
            let name = try element.string()
            guard let named = InterfaceOrientationMask(name: name) else {
                throw element.fail(
                    """
                    \"\(name)\" is not a mask name \
                    (\(InterfaceOrientationMask.namedMasks.map(\.name).joined(separator: ", ")))
                    """
                )
            }
            mask.formUnion(named)
        }
        return mask
    }

    public static func optionalMask(_ reader: JSONReader?) throws(JSONFieldError) -> InterfaceOrientationMask? {
        guard let reader else { return nil }
        return try mask(reader)
    }

    /// A node (`scene`, `navigation` with `stack`, `tab` with `tabs` and `selected`).
    public static func node(_ reader: JSONReader) throws(JSONFieldError) -> PresentationNode {
        let kind = try reader.required("kind").enumeration(PresentationNode.Kind.self)
        var node = PresentationNode(kind: kind, id: try reader.required("id").string())
        node.supported = try optionalMask(try reader.optional("supported"))
        node.shouldAutorotate = try reader.optional("shouldAutorotate")?.bool()
        node.preferred = try reader.optional("preferred")?.enumeration(InterfaceOrientation.self)
        switch kind {
        case .scene:
            break
        case .navigation:
            node.delegatesToChild = try reader.optional("delegatesToChild")?.bool() ?? false
            let stack = try reader.required("stack")
            node.children = try children(stack)
            guard !node.children.isEmpty else { throw stack.fail("a navigation stack needs at least one node") }
        case .tab:
            node.delegatesToChild = try reader.optional("delegatesToChild")?.bool() ?? false
            let tabs = try reader.required("tabs")
            node.children = try children(tabs)
            guard !node.children.isEmpty else { throw tabs.fail("a tab container needs at least one tab") }
            let selected = try reader.optional("selected")
            node.selected = try selected?.int() ?? 0
            guard node.children.indices.contains(node.selected) else {
                throw (selected ?? reader).fail(
                    "selected tab \(node.selected) does not exist (\(node.children.count) tabs)")
            }
        }
        return node
    }

    private static func children(_ reader: JSONReader) throws(JSONFieldError) -> [PresentationNode] {
        var nodes: [PresentationNode] = []
        for element in try reader.array() { nodes.append(try node(element)) }
        return nodes
    }

    /// The `initial` state of a vector, with the documented defaults for absent or null fields.
    public static func state(_ reader: JSONReader) throws(JSONFieldError) -> ResolverState {
        let count = try reader.optional("deviceNotificationCount")
        let notifications = try count?.int() ?? 1
        if let count, notifications < 0 { throw count.fail("must be ≥ 0, found \(notifications)") }
        var presented: [Presentation] = []
        for element in try reader.optional("presented")?.array() ?? [] {
            presented.append(
                Presentation(
                    node: try node(try element.required("node")),
                    fullScreen: try element.optional("fullScreen")?.bool() ?? true))
        }
        return ResolverState(
            profile: try reader.optional("profile")?.enumeration(ResolverProfile.self) ?? .legacy,
            idiom: try reader.optional("idiom")?.enumeration(DeviceIdiom.self) ?? .phone,
            infoPlistMask: try optionalMask(try reader.optional("infoPlistMask")),
            windowMask: try optionalMask(try reader.optional("windowMask")),
            deviceSupportedMask: try optionalMask(try reader.optional("deviceSupportedMask")) ?? .all,
            lock: try reader.optional("lock")?.bool() ?? false,
            deviceNotificationCount: notifications,
            physicalDevice: try reader.required("deviceOrientation").enumeration(DeviceOrientation.self),
            interface: try reader.required("interfaceOrientation").enumeration(InterfaceOrientation.self),
            root: try node(try reader.required("root")),
            presented: presented)
    }

    /// An action object (`{"type": …, …fields}`).
    public static func action(_ reader: JSONReader) throws(JSONFieldError) -> ResolverAction {
        let typeField = try reader.required("type")
        let type = try typeField.string()
        func container() throws(JSONFieldError) -> String? { try reader.optional("container")?.string() }
        switch type {
        case "deviceOrientation":
            return .deviceOrientation(try reader.required("value").enumeration(DeviceOrientation.self))
        case "push": return .push(try node(try reader.required("node")), container: try container())
        case "pop": return .pop(container: try container())
        case "selectTab": return .selectTab(try reader.required("index").int(), container: try container())
        case "present":
            return .present(
                try node(try reader.required("node")), fullScreen: try reader.optional("fullScreen")?.bool() ?? true)
        case "dismiss": return .dismiss
        case "setLock": return .setLock(try reader.required("on").bool())
        case "attemptRotation": return .attemptRotation
        case "forceRotation":
            let field = try reader.required("to")
            let target = try field.enumeration(InterfaceOrientation.self)
            guard target != .unknown else { throw field.fail("forceRotation cannot target unknown") }
            return .forceRotation(target)
        case "requestGeometryUpdate": return .requestGeometryUpdate(try mask(try reader.required("mask")))
        case "updateSupportedOrientations": return .updateSupportedOrientations
        case "updateScene":
            // Only present keys change; a present null restores the default.
            let supported: SettingUpdate<InterfaceOrientationMask> =
                reader.has("supported") ? .set(try optionalMask(try reader.optional("supported"))) : .unchanged
            let autorotate: SettingUpdate<Bool> =
                reader.has("shouldAutorotate") ? .set(try reader.optional("shouldAutorotate")?.bool()) : .unchanged
            let preferred: SettingUpdate<InterfaceOrientation> =
                reader.has("preferred")
                ? .set(try reader.optional("preferred")?.enumeration(InterfaceOrientation.self)) : .unchanged
            return .updateScene(
                id: try reader.required("id").string(), supported: supported, shouldAutorotate: autorotate,
                preferred: preferred)
        case "setWindowMask": return .setWindowMask(try optionalMask(try reader.optional("mask")))
        case "beginDeviceNotifications": return .beginDeviceNotifications
        case "endDeviceNotifications": return .endDeviceNotifications
        case "launch": return .launch
        default:
            throw typeField.fail("unknown action type \"\(type)\"")
        }
    }

    // MARK: writing

    /// An interface change as the vectors write `events` entries (plus `cause`, `decider` and
    /// `boundsSwapped` when `complete`, as in resolver.md §7 O-1).
    public static func json(_ change: InterfaceOrientationChange, complete: Bool = false) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        if complete {
            members.append(("cause", .string(change.cause)))
            members.append(("decider", .string(change.decider)))
        }
        // Typed step by step: Swift 6.2 (Debian's, which builds the arm64 package) gives up
        // type-checking the whole literal at once.
        let degrees: (Int?) -> JSONValue = { $0.map { .number(Double($0)) } ?? .null }
        let transform: JSONValue = change.transform.map { .array($0.map { .number(Double($0)) }) } ?? .null
        members += [
            ("from", .string(change.from.rawValue)),
            ("to", .string(change.to.rawValue)),
            ("rotationDegrees", degrees(change.rotationDegrees)),
            ("deltaDegrees", degrees(change.deltaDegrees)),
            ("transform", transform),
        ]
        if complete { members.append(("boundsSwapped", .bool(change.boundsSwapped))) }
        return .object(members)
    }

    public static func json(_ error: ResolverError?) -> JSONValue {
        guard let error else { return .null }
        return .object([("code", .string(error.code.rawValue)), ("reason", .string(error.reason.rawValue))])
    }

    /// The state after an action in the shape of a vector's `expect`.
    public static func expectation(state: ResolverState, outcome: ResolverOutcome) -> JSONValue {
        .object([
            ("interface", .string(state.interface.rawValue)),
            ("effectiveDevice", .string(state.effectiveDevice.rawValue)),
            ("decider", .string(state.decider.id)),
            ("events", .array(outcome.interfaceChange.map { [json($0)] } ?? [])),
            ("error", json(outcome.error)),
        ])
    }
}

/// A file of resolver test vectors (resolver.md §1).
public struct ResolverVectorFile: Sendable {
    public struct Step: Sendable {
        public let action: ResolverAction
        /// The `expect` object as written; only its keys are compared.
        public let expect: JSONValue
    }

    public struct Vector: Sendable {
        public let id: String
        public let title: String?
        public let initial: ResolverState
        public let steps: [Step]
    }

    public let vectors: [Vector]

    /// Reads a vectors file; a malformed one is reported with the vector and field.
    public init(json document: JSONValue) throws(JSONFieldError) {
        let root = JSONReader(document)
        var vectors: [Vector] = []
        for (index, element) in try root.required("vectors").array().enumerated() {
            let idField = try element.optional("id")
            let label = (try? idField?.string()).map { "id \"\($0)\"" }
            let vector = JSONReader(
                element.value, path: root.path.appending("vectors").appending(index: index, label: label))
            let id = try vector.required("id").string()
            let initial = try ResolverJSON.state(try vector.required("initial"))
            var steps: [Step] = []
            for step in try vector.required("steps").array() {
                let expect = try step.required("expect")
                guard case .object = expect.value else {
                    throw expect.fail("expected an object, found \(expect.typeName)")
                }
                steps.append(Step(action: try ResolverJSON.action(try step.required("action")), expect: expect.value))
            }
            vectors.append(
                Vector(id: id, title: try vector.optional("title")?.string(), initial: initial, steps: steps))
        }
        self.vectors = vectors
    }

    /// The result of one step: `expected` and `actual` hold only the keys that differ.
    public struct StepResult: Sendable {
        public let id: String
        public let step: Int
        public let ok: Bool
        public let expected: JSONValue?
        public let actual: JSONValue?

        /// `{"id", "step", "ok"[, "expected", "actual"]}`.
        public var json: JSONValue {
            var members: [(key: String, value: JSONValue)] = [
                ("id", .string(id)), ("step", .number(Double(step))), ("ok", .bool(ok)),
            ]
            if let expected { members.append(("expected", expected)) }
            if let actual { members.append(("actual", actual)) }
            return .object(members)
        }
    }

    /// Runs every vector on a fresh resolver and compares each step with its `expect`.
    public func run() -> [StepResult] {
        var results: [StepResult] = []
        for vector in vectors {
            var resolver = InterfaceOrientationResolver(state: vector.initial)
            for (index, step) in vector.steps.enumerated() {
                let outcome = resolver.apply(step.action)
                let actual = ResolverJSON.expectation(state: resolver.state, outcome: outcome)
                guard case .object(let actualMembers) = actual else { continue }
                var expectedDiff: [(key: String, value: JSONValue)] = []
                var actualDiff: [(key: String, value: JSONValue)] = []
                // Only the five keys of resolver.md §1 are compared, in that order; a key the vector
                // leaves out is not checked, and anything else in `expect` is commentary.
                for member in actualMembers {
                    guard let wanted = step.expect[member.key], wanted != member.value else { continue }
                    expectedDiff.append((member.key, wanted))
                    actualDiff.append(member)
                }
                let ok = expectedDiff.isEmpty
                results.append(
                    StepResult(
                        id: vector.id, step: index, ok: ok,
                        expected: ok ? nil : .object(expectedDiff), actual: ok ? nil : .object(actualDiff)))
            }
        }
        return results
    }
}
