import OrientationCore
import SensorCore

/// Finding accelerometers: local ones through libudev (sysfs and the udev database, including hwdb's
/// `ACCEL_MOUNT_MATRIX` and `ACCEL_LOCATION`), remote ones through libiio's network backend.
public enum AccelerometerDiscovery {
    static let axes = ["x", "y", "z"]

    /// Every local accelerometer the driver table finds: IIO devices with x, y and z acceleration
    /// channels, raw or buffered, then evdev accelerometers. Fails when udev cannot enumerate.
    public static func localCandidates(udev: Udev) throws(UdevError) -> [AccelerometerCandidate] {
        _ = try udev.devices(subsystem: "iio")  // an enumeration that fails is said, not taken for none
        return SensorDrivers.matches(for: .accelerometer, udev: udev).compactMap {
            if case .accelerometer(let candidate) = $0.match { candidate } else { nil }
        }
    }

    /// Motion-event and FIFO attributes that let a sensor wake the CPU only on motion, or in
    /// batches (listed by `list-sensors`; a polled sensor rests on the motion interrupt).
    static let powerFeatures = MotionEvents.candidateEnables + ["buffer/hwfifo_watermark_max", "buffer/hwfifo_enabled"]

    /// The subsystems whose devices can be accelerometers, for hotplug.
    static var localSubsystems: [String] { SensorDrivers.subsystems(for: .accelerometer) }

    /// Names of the local triggers (`triggerN/name`), for choosing buffered capture.
    static func localTriggerNames(udev: Udev) -> [String] {
        ((try? udev.devices(subsystem: "iio")) ?? []).filter { $0.sysname.hasPrefix("trigger") }.compactMap {
            $0.attribute("name")
        }
    }

    /// Describes a local candidate: location, mount matrix by precedence, the acquisition mode that
    /// will be used, sampling frequency and scale as sysfs reports them.
    public static func describe(
        _ candidate: AccelerometerCandidate, udev: Udev, configuration: SensorConfiguration
    ) -> SensorDescription {
        if candidate.interface == .input {
            return InputAccelerometerDiscovery.describe(candidate, configuration: configuration)
        }
        let device = candidate.sysfsPath.flatMap { udev.device(syspath: $0) }
        let triggers = localTriggerNames(udev: udev)
        let current = device?.attribute("trigger/current_trigger").flatMap { $0.isEmpty ? nil : $0 }
        let trigger = current ?? triggerName(for: candidate.name, number: candidate.number, among: triggers)
        func perAxis(_ attribute: String) -> [Double?]? {
            let values = axes.map { axis in
                device?.attribute("in_accel_\(axis)_\(attribute)") ?? device?.attribute("in_accel_\(attribute)")
            }
            guard values.contains(where: { $0 != nil }) else { return nil }
            return values.map { $0.flatMap(Double.init).flatMap { $0.isFinite ? $0 : nil } }
        }
        let frequencyAttribute =
            device?.attribute("sampling_frequency") ?? device?.attribute("in_accel_sampling_frequency")
        let available =
            device?.attribute("sampling_frequency_available")
            ?? device?.attribute("in_accel_sampling_frequency_available")
        let scale = perAxis("scale"), offset = perAxis("offset")
        var description = makeDescription(
            candidate: candidate, identifier: candidate.deviceID, configuration: configuration, trigger: trigger,
            samplingFrequency: frequencyAttribute.flatMap(Double.init), availableFrequencies: available,
            scale: scale, offset: offset)
        // One reading, as the poll loop converts it (a missing scale is 1, a missing offset 0).
        let raw = axes.compactMap { device?.attribute("in_accel_\($0)_raw").flatMap(Double.init) }
        if raw.count == 3 {
            let converted = (0..<3).map { (index: Int) -> Double in
                let offsetOfAxis: Double = offset?[index] ?? 0
                let scaleOfAxis: Double = scale?[index] ?? 1
                return (raw[index] + offsetOfAxis) * scaleOfAxis
            }
            description.readingMagnitude = Vector3(converted[0], converted[1], converted[2]).magnitude
        }
        description.powerFeatures = powerFeatures.filter { device?.hasAttribute($0) == true }
        if description.acquisition == .buffer,
            ChangeSensitivity.applies(name: device?.attribute("name"), hasAttribute: device?.hasAttribute)
        {
            description.restPacing = ChangeSensitivity.pacing
        }
        let polled = axes.allSatisfy { device?.hasAttribute("in_anglvel_\($0)_raw") == true }
        let scanned = axes.allSatisfy { device?.hasAttribute("scan_elements/in_anglvel_\($0)_en") == true }
        if polled || scanned {
            let buffered = description.acquisition == .buffer
            // As the acquisition judges them (``GyroscopeAttributes``).
            let scaleProblem = GyroscopeAttributes.scaleProblem(
                device: candidate.deviceID,
                scales: (["in_anglvel_scale"] + axes.map { "in_anglvel_\($0)_scale" }).map {
                    (attribute: $0, text: device?.attribute($0))
                })
            description.readsGyroscope = (buffered ? scanned : polled) && scaleProblem == nil
            description.gyroscope = GyroscopeAttributes.imuText(
                device: candidate.deviceID, buffered: buffered,
                notRead: description.readsGyroscope
                    ? nil
                    : scaleProblem
                        ?? (buffered ? "its channels are not in the buffer's scan elements" : "no raw values"))
            if let problem = GyroscopeAttributes.imuMatrixProblem(
                device: candidate.deviceID, attribute: "in_anglvel_mount_matrix",
                text: device?.attribute("in_anglvel_mount_matrix"), accelerometer: description.mountMatrix)
            {
                description.mountMatrixProblems.append(problem)
            }
        }
        return description
    }

    static func makeDescription(
        candidate: AccelerometerCandidate, identifier: String, configuration: SensorConfiguration, trigger: String?,
        samplingFrequency: Double?, availableFrequencies: String?, scale: [Double?]?, offset: [Double?]?
    ) -> SensorDescription {
        let (location, locationOrigin) = candidate.location
        let (matrix, matrixOrigin, problems) = candidate.mountMatrix(configured: configuration.mountMatrix)
        return SensorDescription(
            identifier: identifier, name: candidate.name, label: candidate.label, location: location,
            locationOrigin: locationOrigin,
            sysfsPath: candidate.sysfsPath, deviceNode: candidate.deviceNode, mountMatrix: matrix,
            mountMatrixOrigin: matrixOrigin,
            mountMatrixProblems: problems,
            acquisition: acquisitionMode(requested: configuration.acquisition, candidate: candidate, trigger: trigger),
            samplingFrequency: samplingFrequency, availableFrequencies: availableFrequencies, scale: scale,
            offset: offset,
            hasBuffer: candidate.hasBufferChannels, trigger: trigger)
    }

    /// `auto` captures through the buffer only when the device has scan elements and a trigger to
    /// pace them (a buffer without one may never fill); otherwise it polls.
    static func acquisitionMode(
        requested: AcquisitionMode, candidate: AccelerometerCandidate, trigger: String?
    ) -> AcquisitionMode {
        switch requested {
        case .poll: return .poll
        case .buffer: return candidate.hasBufferChannels ? .buffer : .poll
        case .auto:
            return candidate.hasBufferChannels && (trigger != nil || !candidate.hasRawChannels) ? .buffer : .poll
        }
    }

    /// The trigger a driver registers for its own device: `NAME-devN`, else `NAME-trigger`
    /// (the conventions iio-sensor-proxy relies on).
    static func triggerName(for name: String, number: Int?, among triggers: [String]) -> String? {
        if let number, triggers.contains("\(name)-dev\(number)") { return "\(name)-dev\(number)" }
        if triggers.contains("\(name)-trigger") { return "\(name)-trigger" }
        return nil
    }

    /// The accelerometers `iiod` serves on `host`, with descriptions read through libiio.
    public static func networkCandidates(
        host: String, configuration: SensorConfiguration
    ) throws(IIOError) -> [(AccelerometerCandidate, SensorDescription)] {
        let context = try IIOContext.network(host: host)
        return networkCandidates(context: context, host: host, configuration: configuration)
    }

    static func networkCandidates(
        context: IIOContext, host: String, configuration: SensorConfiguration
    ) -> [(AccelerometerCandidate, SensorDescription)] {
        let devices = context.devices
        let triggers = devices.filter(\.isTrigger).compactMap(\.name)
        return devices.compactMap { device -> (AccelerometerCandidate, SensorDescription)? in
            guard !device.isTrigger else { return nil }
            let channels = axes.compactMap { device.inputChannel("accel_\($0)") }
            guard channels.count == 3 else { return nil }
            let raw = channels.allSatisfy { $0.hasAttribute("raw") }
            let buffered = channels.allSatisfy(\.isScanElement)
            guard raw || buffered else { return nil }
            func attribute(_ name: String) -> String? {
                device.hasAttribute(name) ? try? device.readAttribute(name) : nil
            }
            var matrices: [AccelerometerCandidate.SysfsMountMatrix] = []
            if let text = attribute("mount_matrix") { matrices.append(.init(origin: .sysfsMountMatrix, text: text)) }
            if channels[0].hasAttribute("mount_matrix"), let text = try? channels[0].readAttribute("mount_matrix") {
                matrices.append(.init(origin: .sysfsAccelMountMatrix, text: text))
            }
            if let text = attribute("in_mount_matrix") {
                matrices.append(.init(origin: .sysfsInMountMatrix, text: text))
            }
            let candidate = AccelerometerCandidate(
                deviceID: device.id, name: device.name ?? device.id, label: device.label ?? attribute("label"),
                sysfsLocation: attribute("location"), sysfsMountMatrices: matrices, hasRawChannels: raw,
                hasBufferChannels: buffered)
            let number = candidate.number
            let trigger =
                device.currentTrigger?.name ?? triggerName(for: candidate.name, number: number, among: triggers)
            func perAxis(_ name: String) -> [Double?]? {
                guard channels.contains(where: { $0.hasAttribute(name) }) else { return nil }
                return channels.map { channel in
                    (try? channel.readAttribute(name)).flatMap(Double.init).flatMap { $0.isFinite ? $0 : nil }
                }
            }
            let description = makeDescription(
                candidate: candidate, identifier: "ip:\(host)/\(device.id)", configuration: configuration,
                trigger: trigger,
                samplingFrequency: (attribute("sampling_frequency")
                    ?? (try? channels[0].readAttribute("sampling_frequency"))).flatMap(Double.init),
                availableFrequencies: attribute("sampling_frequency_available")
                    ?? (try? channels[0].readAttribute("sampling_frequency_available")),
                scale: perAxis("scale"), offset: perAxis("offset"))
            return (candidate, description)
        }
    }
}
