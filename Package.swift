// swift-tools-version:6.0
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
]

let package = Package(
    name: "heed",
    products: [
        .executable(name: "heed", targets: ["heed"]),
        .library(name: "HeedCore", targets: ["HeedCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
    ],
    targets: [
        // C libraries from Debian, found through pkg-config. Each has exactly one importer.
        .systemLibrary(
            name: "CPocketSphinx",
            pkgConfig: "pocketsphinx",
            providers: [.apt(["libpocketsphinx-dev", "libsphinxbase-dev"])]
        ),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CEspeakNG", pkgConfig: "espeak-ng", providers: [.apt(["libespeak-ng-dev"])]),
        .systemLibrary(name: "CJSONC", pkgConfig: "json-c", providers: [.apt(["libjson-c-dev"])]),
        // C that Swift cannot write: sphinxbase's log callback is variadic.
        .target(name: "CHeedShims", dependencies: ["CPocketSphinx"]),

        .target(name: "HeedCore", swiftSettings: swiftSettings),
        .target(name: "HeedIntents", dependencies: ["HeedCore"], swiftSettings: swiftSettings),
        .target(name: "HeedAudio", dependencies: ["HeedCore"], swiftSettings: swiftSettings),
        .target(
            name: "HeedSpeech",
            dependencies: [
                "HeedCore", "CPocketSphinx", "CHeedShims",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeedRuntime",
            dependencies: ["HeedCore", "HeedAudio", "HeedIntents", "HeedSpeech"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "heed",
            dependencies: [
                "HeedCore", "HeedAudio", "HeedSpeech", "HeedIntents", "HeedRuntime",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeedIntentsTests",
            dependencies: ["HeedCore", "HeedIntents"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeedTests",
            dependencies: [
                "HeedCore", "HeedAudio", "HeedSpeech", "HeedIntents", "HeedRuntime",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
