// swift-tools-version:6.0
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
]

// The release build lays out the code the listener runs in one place, so that fewer of the
// binary's pages are resident (docs/MEASUREMENTS.md, "Heed's code in one place"): every function
// of Heed's own modules in a section of its own, and `heed` linked by gold with the functions
// that scripts/code-order.py saw run placed together. A stale list costs memory, never behaviour.
// HeedCore, HeedPluginProtocol, HeedPluginKit and HeedClient go without: a package that depends
// on their products may not be handed unsafe flags (HeedTesting, for Heed's own tests, depends
// on modules that have them).
let functionSections: [SwiftSetting] = swiftSettings + [
    .unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release))
]
let codeOrder: [LinkerSetting] = [
    .unsafeFlags(
        ["-use-ld=gold", "-Xlinker", "--section-ordering-file=\(Context.packageDirectory)/contrib/code-order/heed.txt"],
        .when(configuration: .release)
    )
]

let package = Package(
    name: "heed",
    products: [
        .executable(name: "heed", targets: ["heed"]),
        .library(name: "HeedCore", targets: ["HeedCore"]),
        .library(name: "HeedPluginProtocol", targets: ["HeedPluginProtocol"]),
        .library(name: "HeedPluginKit", targets: ["HeedPluginKit"]),
        .library(name: "CHeedPlugin", targets: ["CHeedPlugin"]),
        .executable(name: "heed-plugin-timer", targets: ["heed-plugin-timer"]),
        .executable(name: "heed-plugin-media", targets: ["heed-plugin-media"]),
        .executable(name: "heed-plugin-workout", targets: ["heed-plugin-workout"]),
        .executable(name: "heed-plugin-mpris", targets: ["heed-plugin-mpris"]),
        .executable(name: "heed-plugin-notes", targets: ["heed-plugin-notes"]),
        .library(name: "HeedClient", targets: ["HeedClient"]),
        .library(name: "HeedTesting", targets: ["HeedTesting"]),
        .executable(name: "heed-client-example", targets: ["heed-client-example"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
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
        .systemLibrary(name: "CSpeexDSP", pkgConfig: "speexdsp", providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // C that Swift cannot write: sphinxbase's log callback is variadic, and the acoustic
        // scoring reads PocketSphinx's private structures. Optimised in debug builds too, so
        // that tests decode at the speed users do.
        .target(
            name: "CHeedShims",
            dependencies: ["CPocketSphinx"],
            cSettings: [.unsafeFlags(["-O2"])]
        ),

        .target(name: "HeedCore", swiftSettings: swiftSettings),
        .target(name: "HeedIntents", dependencies: ["HeedCore", "HeedPluginProtocol"], swiftSettings: functionSections),
        .target(name: "HeedAudio", dependencies: ["HeedCore", "CALSA", "CSpeexDSP"], swiftSettings: functionSections),
        // Plugins: the wire protocol (no dependencies), what plugin authors import, the C
        // helper over json-c, the host that runs plugins as child processes, the examples.
        .target(name: "HeedPluginProtocol", swiftSettings: swiftSettings),
        .target(name: "HeedPluginKit", dependencies: ["HeedPluginProtocol"], swiftSettings: swiftSettings),
        .target(name: "CHeedPlugin", dependencies: ["CJSONC"]),
        .target(
            name: "HeedPlugins",
            dependencies: ["HeedCore", "HeedPluginProtocol", .product(name: "Logging", package: "swift-log")],
            swiftSettings: functionSections
        ),
        .executableTarget(name: "heed-plugin-timer", dependencies: ["HeedPluginKit"], swiftSettings: swiftSettings),
        .executableTarget(name: "heed-plugin-media", dependencies: ["HeedPluginKit"], swiftSettings: swiftSettings),
        .executableTarget(name: "heed-plugin-workout", dependencies: ["HeedPluginKit"], swiftSettings: swiftSettings),
        // The D-Bus session bus through sd-bus (every raw sd_bus call): MPRIS, desktop notifications.
        .target(name: "HeedDBus", dependencies: ["CSystemd"], swiftSettings: functionSections),
        .executableTarget(name: "heed-plugin-mpris", dependencies: ["HeedPluginKit", "HeedDBus"], swiftSettings: swiftSettings),
        .executableTarget(name: "heed-plugin-notes", dependencies: ["CHeedPlugin"]),
        .executableTarget(name: "heed-fault-plugin", dependencies: ["HeedPluginProtocol"], swiftSettings: swiftSettings),
        .target(
            name: "HeedSpeech",
            dependencies: [
                "HeedCore", "CPocketSphinx", "CHeedShims", "CEspeakNG",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: functionSections
        ),
        // What Heed keeps between runs: authorization, registered vocabulary, the configuration.
        .target(
            name: "HeedState",
            dependencies: ["HeedCore", "HeedIntents", "HeedSpeech", "HeedPlugins"],
            swiftSettings: functionSections
        ),
        // Decoding labelled corpora and reporting accuracy and rejection: only the CLI's eval uses it.
        .target(
            name: "HeedEvaluation",
            dependencies: ["HeedCore", "HeedAudio", "HeedIntents", "HeedSpeech"],
            swiftSettings: functionSections
        ),
        // Doubles for the logic above the engines: a scripted recognizer, audio in memory.
        .target(name: "HeedTesting", dependencies: ["HeedCore", "HeedPlugins", "HeedRuntime"], swiftSettings: swiftSettings),
        // The pipeline: listener, conversation and dispatch, dialog grammars.
        .target(
            name: "HeedRuntime",
            dependencies: [
                "HeedCore", "HeedAudio", "HeedIntents", "HeedSpeech", "HeedPlugins", "HeedPluginProtocol", "HeedState",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: functionSections
        ),
        // The client API of `heed serve`: the wire protocol and an async client, on Foundation and
        // Glibc only (it holds the one file of raw socket calls, which the service shares).
        .target(name: "HeedClient", swiftSettings: swiftSettings),
        .executableTarget(name: "heed-client-example", dependencies: ["HeedClient"], swiftSettings: swiftSettings),
        // `heed serve`: the socket, client identification and permission, recognition tasks.
        .target(
            name: "HeedService",
            dependencies: [
                "HeedClient", "HeedDBus", "HeedCore", "HeedAudio", "HeedSpeech", "HeedIntents", "HeedPlugins", "HeedRuntime", "HeedState",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: functionSections
        ),
        // The Wyoming door of `heed serve`: Home Assistant and voice satellites (docs/WYOMING.md).
        .target(
            name: "HeedWyoming",
            dependencies: [
                "HeedClient", "HeedCore", "HeedAudio", "HeedSpeech", "HeedIntents", "HeedPlugins", "HeedRuntime", "HeedService", "HeedState",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: functionSections
        ),
        .executableTarget(
            name: "heed",
            dependencies: [
                "HeedCore", "HeedAudio", "HeedSpeech", "HeedIntents", "HeedPluginProtocol", "HeedPlugins", "HeedRuntime",
                "HeedState", "HeedEvaluation",
                "HeedService", "HeedWyoming", "heed-client-example",
                "heed-plugin-timer", "heed-plugin-media", "heed-plugin-workout", "heed-plugin-notes",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: functionSections,
            linkerSettings: codeOrder
        ),
        .testTarget(
            name: "HeedPluginTests",
            dependencies: [
                "HeedPlugins", "HeedPluginProtocol", "HeedCore", "HeedTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                "heed-plugin-timer", "heed-plugin-media", "heed-plugin-workout", "heed-plugin-notes", "heed-fault-plugin",
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
                "HeedCore", "HeedAudio", "HeedSpeech", "HeedIntents", "HeedPlugins", "HeedRuntime", "HeedState", "HeedEvaluation",
                "HeedClient", "HeedService", "HeedWyoming", "HeedTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
