// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "orientd",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "OrientationCore", targets: ["OrientationCore"]),
        .executable(name: "orientd", targets: ["orientd"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        /// Pure values and state machines: orientation types, mount matrix, detector, resolver.
        .target(name: "OrientationCore"),
        /// The sensor abstraction the daemon sees: the --sensor grammar, events, the mock sources and
        /// the pure selection and fault policies.
        .target(name: "SensorCore", dependencies: ["OrientationCore", "CLinux"]),
        /// eventfd and pthread_setname_np, which Swift's Glibc module leaves out (header only).
        .systemLibrary(name: "CLinux"),
        .systemLibrary(name: "CLibIIO", pkgConfig: "libiio", providers: [.apt(["libiio-dev"])]),
        .systemLibrary(name: "CLibUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        /// The only importer of libiio and libudev: discovery, hotplug, polling and buffered capture.
        .target(name: "SensorIO", dependencies: ["CLibIIO", "CLibUdev", "SensorCore", "OrientationCore"]),
        /// The corpus metrics of `../shared/corpus/score.py`, for tests and `make bench`.
        .target(name: "CorpusScoring", dependencies: ["OrientationCore"]),
        .executableTarget(
            name: "orientd",
            dependencies: [
                "OrientationCore", "SensorCore", "SensorIO",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "orientd-bench",
            dependencies: ["OrientationCore", "CorpusScoring"]
        ),
        .testTarget(name: "OrientationCoreTests", dependencies: ["OrientationCore"]),
        .testTarget(name: "SensorCoreTests", dependencies: ["SensorCore", "OrientationCore"]),
        .testTarget(
            name: "OrientdCLITests",
            dependencies: ["orientd", "OrientationCore", "CorpusScoring"]
        ),
        .testTarget(
            name: "CorpusTests",
            dependencies: ["OrientationCore", "CorpusScoring"]
        ),
    ]
)
