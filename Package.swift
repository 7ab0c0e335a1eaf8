// swift-tools-version: 6.1
import Foundation
import PackageDescription

/// The Swift packages orientd builds on. A checkout resolves them from their repositories; the
/// source package (`make source`) carries them in vendor/, one folder per package of Package.resolved
/// (those below and what they use), because a distribution's build machine has no network. The
/// folders are then the root's own dependencies by path, which SwiftPM lets override the packages'
/// references to the same repositories (it warns of each "conflicting identity" and uses the folder).
let repositoryDependencies: [Package.Dependency] = [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
]
let vendorFolder = Context.packageDirectory + "/vendor"
let vendoredPackages = ((try? FileManager.default.contentsOfDirectory(atPath: vendorFolder)) ?? [])
    .filter { FileManager.default.fileExists(atPath: vendorFolder + "/" + $0 + "/Package.swift") }
let dependencies: [Package.Dependency] =
    vendoredPackages.isEmpty
    ? repositoryDependencies : vendoredPackages.sorted().map { .package(path: "vendor/" + $0) }

let package = Package(
    name: "orientd",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "OrientationCore", targets: ["OrientationCore"]),
        .executable(name: "orientd", targets: ["orientd"]),
        .executable(name: "orientctl", targets: ["orientctl"]),
        .library(name: "OrientationClient", targets: ["OrientationClient"]),
    ],
    dependencies: dependencies,
    targets: [
        /// Pure values and state machines: orientation types, mount matrix, detector, resolver. Imports
        /// nothing but the standard library (and the C library for its maths).
        .target(name: "OrientationCore"),
        /// The sensor abstraction the daemon sees: the --sensor grammar, events, the mock sources and
        /// the pure selection and fault policies.
        .target(
            name: "SensorCore",
            dependencies: [
                "OrientationCore", "CLinux",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
        /// eventfd and pthread_setname_np, which Swift's Glibc module leaves out (header only).
        .systemLibrary(name: "CLinux"),
        // sd-bus's vtable macros and variadic calls, which Swift cannot import (the D-Bus front end).
        .target(name: "CSdBus", linkerSettings: [.linkedLibrary("systemd")]),
        // uinput's and evdev's structures and ioctls (the tablet-mode switch, the lid switch).
        .target(name: "CUInput"),
        .systemLibrary(name: "CLibIIO", pkgConfig: "libiio", providers: [.apt(["libiio-dev"])]),
        .systemLibrary(name: "CLibUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        /// The only importer of libiio and libudev: discovery, hotplug, polling and buffered capture.
        .target(
            name: "SensorIO",
            dependencies: [
                "CLibIIO", "CLibUdev", "CUInput", "CLinux", "SensorCore", "OrientationCore",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
        /// The wire protocol v1: its vocabulary (operations, topics, error codes), requests, messages,
        /// JSON values and the resolver's JSON, line framing (docs/protocol.md).
        .target(
            name: "OrientationProtocol",
            dependencies: [
                "OrientationCore",
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        /// The daemon: hub (state, claims, sessions), socket server, authorization, services.
        .target(
            name: "OrientationDaemon",
            dependencies: [
                "OrientationCore", "OrientationProtocol", "SensorCore", "CLinux", "CSdBus",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        /// The Swift client library apps link (and orientctl uses).
        .target(
            name: "OrientationClient",
            dependencies: [
                "OrientationCore", "OrientationProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]),
        .executableTarget(
            name: "orientctl",
            dependencies: [
                "OrientationClient", "OrientationProtocol", "OrientationCore", "DesktopIntegration",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        /// Rotating compositors' outputs and touch input (sway, Hyprland, wlroots, X11) for
        /// `orientctl follow --rotate`, and running external tools.
        .target(name: "DesktopIntegration", dependencies: ["OrientationCore", "OrientationProtocol"]),
        /// Long simulated sessions of working sensors (physics, calibration, quantisation, HID
        /// change-only reporting) and the fault-policy soak that plays them, for tests and `make bench`.
        .target(name: "SensorSimulation", dependencies: ["OrientationCore", "SensorCore"]),
        /// The corpus metrics of `Tests/Fixtures/corpus/score.py`, for tests and `make bench`.
        .target(name: "CorpusScoring", dependencies: ["OrientationCore"]),
        .executableTarget(
            name: "orientd",
            dependencies: [
                "OrientationCore", "SensorCore", "SensorIO", "OrientationDaemon", "OrientationProtocol",
                "OrientationClient",
                "DesktopIntegration", "CLinux",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "orientd-fuzz",
            dependencies: [
                "OrientationProtocol", "OrientationCore", "CLinux",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "orientd-bench",
            dependencies: [
                "OrientationCore", "OrientationProtocol", "CorpusScoring", "CLinux", "SensorCore", "SensorSimulation",
            ]
        ),
        .testTarget(name: "OrientationCoreTests", dependencies: ["OrientationCore"]),
        .testTarget(name: "SensorIOTests", dependencies: ["SensorIO", "SensorCore", "OrientationCore"]),
        .testTarget(name: "SensorCoreTests", dependencies: ["SensorCore", "OrientationCore", "SensorSimulation"]),
        .testTarget(name: "DesktopIntegrationTests", dependencies: ["DesktopIntegration", "OrientationCore"]),
        .testTarget(
            name: "OrientationProtocolTests",
            dependencies: [
                "OrientationProtocol", "OrientationCore",
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]),
        .testTarget(
            name: "OrientationDaemonTests",
            dependencies: [
                "OrientationDaemon", "OrientationProtocol", "OrientationCore", "SensorCore",
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]),
        .testTarget(
            name: "OrientdCLITests",
            dependencies: [
                "orientd", "orientctl", "OrientationCore", "OrientationDaemon", "OrientationProtocol", "CorpusScoring",
            ]
        ),
        .testTarget(
            name: "CorpusTests",
            dependencies: ["OrientationCore", "CorpusScoring", "CLinux", "SensorCore", "SensorSimulation"]
        ),
    ]
)
