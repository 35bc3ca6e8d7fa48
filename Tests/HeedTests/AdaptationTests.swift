import Foundation
import HeedAudio
import HeedCore
import HeedRuntime
@testable import HeedSpeech
import Testing
import HeedTesting

/// `heed adapt` on real recordings with Debian's sphinxtrain, run by the built `heed`.
@Suite(
    "Adaptation to a speaker",
    .enabled(
        if: Fixtures.hasPocketSphinx && Fixtures.corpora != nil && FileManager.default.isExecutableFile(atPath: "/usr/lib/sphinxtrain/bw")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/pocketsphinx_mdef_convert"),
        "needs pocketsphinx-en-us, sphinxtrain, pocketsphinx (mdef converter) and the shared corpora"),
    .serialized
)
struct AdaptationTests {
    let folder: URL
    let environment: [String: String]

    init() throws {
        folder = try TemporaryFolder.make()
        environment = ["XDG_DATA_HOME": folder.appendingPathComponent("data").path]
    }

    /// A manifest of one FSDD speaker's recordings: repetitions 0–4 (`training`) or 5–9.
    func manifest(_ speaker: String, training: Bool, limit: Int = 50, extra: [String] = []) throws -> URL {
        let corpus = (Fixtures.corpora ?? "") + "/fsdd_digits"
        let rows = try String(contentsOfFile: corpus + "/manifest.tsv", encoding: .utf8).split(separator: "\n").dropFirst().compactMap { line -> String? in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count >= 4, fields[3] == speaker, let repetition = Int(fields[0].split(separator: "_").last?.dropLast(4) ?? "") else { return nil }
            return (repetition < 5) == training ? "\(corpus)/\(fields[0])\t\(fields[1])" : nil
        }
        let url = folder.appendingPathComponent("\(speaker)-\(training ? "train" : "test")-\(UUID().uuidString.prefix(6)).tsv")
        try (["wav\ttranscript"] + rows.prefix(limit) + extra).joined(separator: "\n").appending("\n").write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    func heed(_ arguments: [String], environment extra: [String: String] = [:]) throws -> (status: Int32, output: String, error: String) {
        try Fixtures.run(Fixtures.heedBinary, arguments, environment: environment.merging(extra) { $1 })
    }

    func rightCount(_ manifest: URL, _ flags: [String] = []) throws -> Int {
        try heardRight(manifest, flags).right
    }

    /// The recordings heard right, and of them those accepted at the always-on point.
    func heardRight(_ manifest: URL, _ flags: [String] = []) throws -> (right: Int, acceptedAlwaysOn: Int) {
        let run = try heed(["eval", manifest.path, "-g", Fixtures.grammar("digit.gram"), "--reject-below", "0", "--json"] + flags)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        let results = try #require(report["results"] as? [[String: Any]])
        let right = results.filter { $0["right"] as? Bool == true }
        let point = ConfidenceModel.oneWord.operatingPoint
        return (right.count, right.filter { ($0["confidence"] as? Double ?? 0) >= point }.count)
    }

    func status() throws -> [String: Any] {
        let run = try heed(["adapt", "--status", "--json"])
        #expect(run.status == 0, "\(run.error)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
    }

    /// Adapting on what Heed heard: a speaker's recordings kept as the listener keeps them, with
    /// the words the shipped model heard in them (right or not), then `heed adapt --heard`; a
    /// recording with a word the dictionary lacks is left out, and more of the speaker's other
    /// recordings are accepted always-on, with about as many heard right.
    @Test func adaptingOnWhatHeedHeardAcceptsMoreOfTheSpeaker() throws {
        let training = try manifest("nicolas", training: true)
        let test = try manifest("nicolas", training: false)
        let heard = try heed(["eval", training.path, "-g", Fixtures.grammar("digit.gram"), "--reject-below", "0", "--json", "--no-adaptation"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(heard.output.utf8)) as? [String: Any])
        let results = try #require(report["results"] as? [[String: Any]])
        let kept = HeardRecordings(folder: folder.appendingPathComponent("data/heed/adaptation/heard"))
        var wrong = 0
        for result in results {
            let text = try #require(result["text"] as? String)
            guard !text.isEmpty, let file = result["file"] as? String else { continue }
            if result["right"] as? Bool != true { wrong += 1 }
            try kept.keep(try AudioFile.read(file), words: text.split(separator: " ").map(String.init))
        }
        // A registered name, said in a command: no dictionary pronunciation to adapt it with.
        try kept.keep(try AudioFile.read(try #require(results.first?["file"] as? String)), words: ["play", "zydecoish"])
        let count = kept.rows().count
        #expect(wrong > 5, "some of what was kept was heard wrong (\(wrong))")

        let before = try heardRight(test)
        let adapt = try heed(["adapt", "--heard", "--json"])
        #expect(adapt.status == 0, "\(adapt.error)")
        #expect(adapt.error.contains("left out 1 of \(count) commands") == false, "--json keeps stderr quiet")
        let record = try status()
        #expect(record["recordings"] as? Int == count - 1)
        #expect((record["source"] as? String)?.hasSuffix("adaptation/heard/manifest.tsv") == true, "\(record)")
        let after = try heardRight(test)
        // Measured since the one-digit grammar lost its "oh": heard right 30 → 28 of 50 (27 → 27
        // with it), accepted always-on 22 → 26. This speaker is heard wrong 22 times in 50 of
        // what is adapted on, and the mistakes are learnt with the voice; over the six FSDD folds
        // (scripts/self-adaptation-benchmark.sh … 0) heard right goes 216 → 217 of 300.
        #expect(after.right >= before.right - 2, "right before \(before.right) of 50, after \(after.right)")
        #expect(after.acceptedAlwaysOn > before.acceptedAlwaysOn, "accepted always-on before \(before.acceptedAlwaysOn), after \(after.acceptedAlwaysOn)")
        let again = try heed(["adapt", "--heard", "--without-noisy-copies"])
        #expect(again.error.contains("left out 1 of \(count) commands with words the dictionary lacks: zydecoish"), "\(again.error)")
    }

    /// Adapted on 50 recordings of a speaker the model hears badly, the other 50 are heard better;
    /// `--no-adaptation` hears as before, `--reset` removes it.
    @Test func adaptingToASpeakerHearsTheSpeakerBetter() throws {
        let test = try manifest("jackson", training: false)
        let before = try rightCount(test)
        let adapt = try heed(["adapt", try manifest("jackson", training: true).path, "--json"])
        #expect(adapt.status == 0, "\(adapt.error)")
        let record = try status()
        #expect(record["method"] as? String == "map")
        #expect(record["recordings"] as? Int == 50)
        #expect(record["alignedRecordings"] as? Int == 50)
        #expect(record["noisyCopies"] as? Int == 100 && record["copyNoise"] as? String == "pink noise", "\(record)")
        #expect(record["baseModel"] as? String == Fixtures.model)
        // MAP moves the means; every other file of the model is the shipped one.
        let adapted = folder.appendingPathComponent("data/heed/adaptation/current").resolvingSymlinksInPath().path
        for file in ["variances", "transition_matrices", "sendump", "mdef", "feat.params"] {
            #expect(FileManager.default.contentsEqual(atPath: "\(adapted)/\(file)", andPath: "\(Fixtures.model)/\(file)"), "\(file)")
        }
        #expect(!FileManager.default.contentsEqual(atPath: "\(adapted)/means", andPath: "\(Fixtures.model)/means"))
        #expect(!FileManager.default.fileExists(atPath: "\(adapted)/mixture_weights"))
        let after = try rightCount(test)
        #expect(after >= before + 5, "right before \(before) of 50, after \(after)")
        #expect(try rightCount(test, ["--no-adaptation"]) == before)
        // Another model is not heard with this adaptation.
        let reset = try heed(["adapt", "--reset"])
        #expect(reset.status == 0 && reset.output.contains("Adaptation removed"))
        #expect(try status()["adapted"] as? Bool == false)
        #expect(try rightCount(test) == before)
    }

    /// With the noisy copies MAP estimates the means twice: `bw` aligns the recordings with the
    /// shipped model, MAP moves the means, `bw` aligns them again with those means, and MAP starts
    /// from the shipped means once more with the new statistics; the second estimate is the one
    /// installed. Without the copies, once.
    /// (The real tools run behind wrappers that note what each was given.)
    @Test func mapEstimatesTwiceFromTheShippedMeans() throws {
        let tools = folder.appendingPathComponent("noting-tools")
        try FileManager.default.createDirectory(at: tools, withIntermediateDirectories: true)
        let log = tools.appendingPathComponent("calls")
        // bw keeps the means of the model it aligns with; map_adapt the means it wrote.
        try Fixtures.writeExecutable(
            """
            #!/bin/sh
            n=$(($(cat \(log.path) 2>/dev/null | grep -c '^bw ') + 1))
            echo "bw $*" >> \(log.path)
            previous=; for argument in "$@"; do [ "$previous" = -hmmdir ] && cp "$argument/means" \(tools.path)/bw-means-$n; previous=$argument; done
            exec /usr/lib/sphinxtrain/bw "$@"

            """, to: tools.appendingPathComponent("bw"))
        try Fixtures.writeExecutable(
            """
            #!/bin/sh
            n=$(($(cat \(log.path) 2>/dev/null | grep -c '^map_adapt ') + 1))
            echo "map_adapt $*" >> \(log.path)
            /usr/lib/sphinxtrain/map_adapt "$@" || exit $?
            previous=; for argument in "$@"; do [ "$previous" = -mapmeanfn ] && cp "$argument" \(tools.path)/map-means-$n; previous=$argument; done
            exit 0

            """, to: tools.appendingPathComponent("map_adapt"))
        try FileManager.default.createSymbolicLink(atPath: tools.appendingPathComponent("mllr_solve").path, withDestinationPath: "/usr/lib/sphinxtrain/mllr_solve")

        let run = try heed(["adapt", try manifest("yweweler", training: true).path], environment: ["HEED_SPHINXTRAIN_DIR": tools.path])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.error.contains("statistics again, with the adapted means"), "\(run.error)")
        let calls = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        #expect(calls.map { $0.prefix { $0 != " " } } == ["bw", "map_adapt", "bw", "map_adapt"], "\(calls)")
        let shipped = "\(Fixtures.model)/means"
        func file(_ name: String) -> String { tools.appendingPathComponent(name).path }
        let files = FileManager.default
        #expect(files.contentsEqual(atPath: file("bw-means-1"), andPath: shipped), "the first alignment is the shipped model's")
        #expect(files.contentsEqual(atPath: file("bw-means-2"), andPath: file("map-means-1")), "the second, the first estimate's")
        #expect(!files.contentsEqual(atPath: file("map-means-1"), andPath: file("map-means-2")))
        #expect(calls.filter { $0.hasPrefix("map_adapt") }.allSatisfy { $0.contains("-meanfn \(shipped) ") }, "MAP's prior is the shipped means")
        let adapted = folder.appendingPathComponent("data/heed/adaptation/current").resolvingSymlinksInPath().path
        #expect(files.contentsEqual(atPath: "\(adapted)/means", andPath: file("map-means-2")), "the second estimate is in use")

        // Without the copies the means are estimated once.
        try FileManager.default.removeItem(at: log)
        let alone = try heed(
            ["adapt", try manifest("yweweler", training: true).path, "--without-noisy-copies"], environment: ["HEED_SPHINXTRAIN_DIR": tools.path])
        #expect(alone.status == 0, "\(alone.error)")
        let once = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        #expect(once.map { $0.prefix { $0 != " " } } == ["bw", "map_adapt"], "\(once)")
    }

    /// The noisy copies are what make the adapted model hear the speaker in noise: adapted with
    /// copies made with half of the kitchen noise, the speaker is heard better in the other half
    /// than adapted on the recordings alone.
    @Test func noisyCopiesHearTheSpeakerInNoise() throws {
        let corpora = try #require(Fixtures.corpora)
        let kitchen = try AudioFile.read(corpora + "/picovoice_barista/noise/kitchen.wav")
        let half = kitchen.samples.count / 2
        let heard = folder.appendingPathComponent("kitchen-first-half.wav"), tested = folder.appendingPathComponent("kitchen-second-half.wav")
        try AudioBuffer(samples: Array(kitchen.samples[..<half]), sampleRate: kitchen.sampleRate).wavData.write(to: heard)
        try AudioBuffer(samples: Array(kitchen.samples[half...]), sampleRate: kitchen.sampleRate).wavData.write(to: tested)
        let training = try manifest("jackson", training: true), test = try manifest("jackson", training: false)
        let noise = ["--noise", tested.path, "--snr", "12"]

        var run = try heed(["adapt", training.path, "--without-noisy-copies"])
        #expect(run.status == 0, "\(run.error)")
        #expect(try status()["noisyCopies"] as? Int == 0)
        let alone = try rightCount(test, noise)

        run = try heed(["adapt", training.path, "--room-noise", heard.path])
        #expect(run.status == 0, "\(run.error)")
        let record = try status()
        #expect(record["noisyCopies"] as? Int == 100 && record["copyNoise"] as? String == heard.path, "\(record)")
        let withCopies = try rightCount(test, noise)
        #expect(withCopies >= alone + 4, "in noise: \(alone) of 50 adapted on the recordings alone, \(withCopies) with noisy copies")

        // A room noise that is not there: a clear error, and the adaptation in use stays.
        run = try heed(["adapt", training.path, "--room-noise", folder.appendingPathComponent("nowhere.wav").path])
        #expect(run.status == 1 && run.error.contains("nowhere.wav"), "\(run.error)")
        let short = folder.appendingPathComponent("short-noise.wav")
        try AudioBuffer(samples: Array(kitchen.samples[..<8_000]), sampleRate: kitchen.sampleRate).wavData.write(to: short)
        run = try heed(["adapt", training.path, "--room-noise", short.path])
        #expect(run.status == 1 && run.error.contains("\(short.path): 0.50 s of room noise is too little"), "\(run.error)")
        #expect(try status()["copyNoise"] as? String == heard.path)
        run = try heed(["adapt", training.path, "--room-noise", heard.path, "--without-noisy-copies"])
        #expect(run.status != 0 && run.error.contains("--room-noise makes the noisy copies"), "\(run.error)")
    }

    /// Bad input fails with a clear error, exit 1, and the adaptation in use stays in use.
    @Test func badInputLeavesTheAdaptationInUse() throws {
        let good = try heed(["adapt", try manifest("yweweler", training: true).path, "--method", "mllr"])
        #expect(good.status == 0, "\(good.error)")
        let created = try status()["created"] as? String
        #expect(created != nil)

        let unknown = try manifest("yweweler", training: true, extra: ["\(folder.path)/nowhere.wav\tzorblax"])
        var run = try heed(["adapt", unknown.path])
        #expect(run.status == 1)
        #expect(run.error.contains("cannot") || run.error.contains("nowhere.wav"), "\(run.error)")

        let word = try manifest("yweweler", training: true, extra: [((Fixtures.corpora ?? "") + "/fsdd_digits/wav/yweweler/0_yweweler_0.wav\tzorblax")])
        run = try heed(["adapt", word.path])
        #expect(run.status == 1)
        #expect(run.error.contains("\(word.path):52: no pronunciation for \"zorblax\""), "\(run.error)")

        let little = try manifest("yweweler", training: true, limit: 3)
        run = try heed(["adapt", little.path])
        #expect(run.status == 1)
        #expect(run.error.contains("too little audio to adapt on: 3 recordings"), "\(run.error)")

        let untranscribed = try manifest("yweweler", training: true, extra: [(Fixtures.corpora ?? "") + "/fsdd_digits/wav/yweweler/0_yweweler_0.wav"])
        run = try heed(["adapt", untranscribed.path])
        #expect(run.status == 1)
        #expect(run.error.contains("\(untranscribed.path):52: no transcript"), "\(run.error)")

        run = try heed(["adapt", try manifest("yweweler", training: true).path], environment: ["HEED_SPHINXTRAIN_DIR": "/nonexistent"])
        #expect(run.status == 1)
        #expect(run.error.contains("sphinxtrain's /nonexistent/bw is missing"), "\(run.error)")

        // A tool that fails midway (a stand-in for bw; the real map_adapt and mllr_solve are never reached).
        let tools = folder.appendingPathComponent("tools")
        try FileManager.default.createDirectory(at: tools, withIntermediateDirectories: true)
        for name in ["bw", "map_adapt", "mllr_solve"] {
            let script = tools.appendingPathComponent(name)
            try Fixtures.writeExecutable("#!/bin/sh\necho 'out of memory, pretend' >&2\nexit 3\n", to: script)
        }
        run = try heed(["adapt", try manifest("yweweler", training: true).path], environment: ["HEED_SPHINXTRAIN_DIR": tools.path])
        #expect(run.status == 1)
        #expect(run.error.contains("bw failed (status 3)") && run.error.contains("out of memory, pretend"), "\(run.error)")

        #expect(try status()["created"] as? String == created, "the adaptation in use is unchanged")
        let models = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("data/heed/adaptation/models").path)
        #expect(models.count == 1, "failed runs leave nothing behind: \(models)")
    }

    /// `--record` on a recording standing in for the microphone: a sentence that is not the
    /// prompt is asked again, every prompt read is kept, and the adaptation is made from them.
    /// The reader is flite (synthetic speech: this tests the conversation, not accuracy).
    @Test(.enabled(if: ["/usr/bin/flite", "/usr/bin/sox"].allSatisfy(FileManager.default.isExecutableFile(atPath:)), "needs flite and sox"))
    func recordingPromptsAsksAgainWhenMisreadThenAdapts() throws {
        let shown = try heed(["adapt", "--record", "--prompts", "8", "--show-prompts"])
        let prompts = shown.output.split(separator: "\n").map(String.init)
        #expect(prompts.count == 8 && Set(prompts).count == 8, "\(shown.output)")
        var parts: [String] = []
        for (index, sentence) in (["what is the weather like in paris today"] + prompts).enumerated() {
            let spoken = folder.appendingPathComponent("spoken-\(index).wav").path
            let padded = folder.appendingPathComponent(String(format: "part-%02d.wav", index)).path
            try #require(try Fixtures.run(URL(fileURLWithPath: "/usr/bin/flite"), ["-voice", "slt", "-t", sentence, "-o", spoken]).status == 0)
            try #require(try Fixtures.run(URL(fileURLWithPath: "/usr/bin/sox"), [spoken, "-r", "16000", "-c", "1", padded, "pad", "0.5", "1.0"]).status == 0)
            parts.append(padded)
        }
        let whole = folder.appendingPathComponent("readings.wav").path
        try #require(try Fixtures.run(URL(fileURLWithPath: "/usr/bin/sox"), parts + [whole]).status == 0)

        let run = try heed(["adapt", "--record", "--prompts", "8", "--input", whole, "--json"])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.error.contains("(1/8) \(prompts[0])\n") && run.error.contains("Once more, please: \(prompts[0])"), "\(run.error)")
        #expect(!run.error.contains("Skipped"), "\(run.error)")
        let record = try status()
        #expect(record["recordings"] as? Int == 8)
        #expect((record["source"] as? String)?.hasSuffix("heed/adaptation/recordings/manifest.tsv") == true)
        let manifest = try String(contentsOfFile: folder.path + "/data/heed/adaptation/recordings/manifest.tsv", encoding: .utf8)
        #expect(manifest.split(separator: "\n").dropFirst().map { String($0.split(separator: "\t")[1]) } == prompts)

        // The recording ends before every prompt is read: an error, and the adaptation stays.
        let short = folder.appendingPathComponent("short.wav").path
        try #require(try Fixtures.run(URL(fileURLWithPath: "/usr/bin/sox"), Array(parts[1...3]) + [short]).status == 0)
        let ended = try heed(["adapt", "--record", "--prompts", "8", "--input", short])
        #expect(ended.status == 1)
        #expect(ended.error.contains("the audio ended after 3 of 8 sentences"), "\(ended.error)")
        #expect(try status()["created"] as? String == record["created"] as? String)
        let kept = try String(contentsOfFile: folder.path + "/data/heed/adaptation/recordings/manifest.tsv", encoding: .utf8)
        #expect(kept == manifest, "the last session's recordings are kept")
    }

    @Test func usage() throws {
        let run = try heed(["adapt"])
        #expect(run.status == 2)
        #expect(run.error.contains("give a manifest, --record, --heard, --status, --reset or --forget-heard"))
        let two = try heed(["adapt", "--heard", "--forget-heard"])
        #expect(two.status == 2 && two.error.contains("(one of them)"), "\(two.error)")
        let half = try heed(["adapt", "some.tsv", "--noise", "kitchen.wav"])
        #expect(half.status == 2)
        #expect(half.error.contains("--noise and --snr go together"))
    }
}

@Suite("Acoustic model files")
struct AcousticModelFileTests {
    /// Debian's quantized weights become the float file sphinxtrain reads: the right sizes, and
    /// every distribution sums to one.
    @Test(.enabled(if: Fixtures.hasPocketSphinx, "needs pocketsphinx-en-us"))
    func mixtureWeightsFromSendump() throws {
        let data = try AcousticModelFiles.mixtureWeights(fromSendump: Fixtures.model + "/sendump")
        let header = try #require(data.range(of: Data("endhdr\n".utf8)))
        #expect(header.upperBound % 4 == 0)
        let numbers = data[header.upperBound...].withUnsafeBytes { Array($0.bindMemory(to: UInt32.self).prefix(5)) }
        #expect(numbers == [0x1122_3344, 5126, 3, 128, 5126 * 3 * 128])
        let values = data[(header.upperBound + 20)...].withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        #expect(values.count == 5126 * 3 * 128)
        for distribution in stride(from: 0, to: values.count, by: 128 * 97) {
            let sum = values[distribution..<(distribution + 128)].reduce(0, +)
            #expect(abs(sum - 1) < 1e-4)
        }
    }

    @Test func aTruncatedSendumpIsAnErrorNamingTheFile() throws {
        let file = try TemporaryFolder.make().appendingPathComponent("sendump")
        var bytes = Data([12, 0, 0, 0]) + Data("hello there\0".utf8) + Data([0, 0, 0, 0, 128, 0, 0, 0, 10, 0, 0, 0])
        bytes += Data(repeating: 1, count: 100)
        try bytes.write(to: file)
        #expect(throws: AcousticModelFiles.FormatError.self) { try AcousticModelFiles.mixtureWeights(fromSendump: file.path) }
        do {
            _ = try AcousticModelFiles.mixtureWeights(fromSendump: file.path)
        } catch {
            #expect(error.description.hasPrefix(file.path))
        }
    }
}

@Suite("Adaptation prompts")
struct AdaptationPromptTests {
    /// Each next sentence adds the most sounds not yet covered (then phone pairs, then the shorter
    /// wins); a sentence with a word that has no pronunciation is never chosen.
    @Test func promptsCoverTheMostPhonesFirst() {
        let pronunciations: [String: [String]] = [
            "pause": ["P", "AO", "Z"], "stop": ["S", "T", "AA", "P"], "it": ["IH", "T"],
            "next": ["N", "EH", "K", "S", "T"], "song": ["S", "AO", "NG"], "zorblax": [],
        ]
        let chosen = HeedRuntime.AdaptationPrompts.choose(
            from: ["pause it", "stop it", "next song", "pause", "next song", "zorblax now"], count: 3, pronunciations: pronunciations)
        // "next song" brings 8 phones; "stop it" and "pause it" then 3 each, 3 new pairs each: the
        // shorter; then "pause" and "pause it" add Z and two pairs: the shorter again.
        #expect(chosen == ["next song", "stop it", "pause"])
        #expect(HeedRuntime.AdaptationPrompts.choose(from: ["pause it"], count: 5, pronunciations: pronunciations) == ["pause it"])
    }
}
