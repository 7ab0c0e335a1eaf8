// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "orientd",
    platforms: [.macOS(.v13)],
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
        /// The corpus metrics of `../shared/corpus/score.py`, for tests and `make bench`.
        .target(name: "CorpusScoring", dependencies: ["OrientationCore"]),
        .executableTarget(
            name: "orientd",
            dependencies: [
                "OrientationCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "orientd-bench",
            dependencies: ["OrientationCore", "CorpusScoring"]
        ),
        .testTarget(name: "OrientationCoreTests", dependencies: ["OrientationCore"]),
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
