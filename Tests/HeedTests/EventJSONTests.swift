import Foundation
import HeedIntents
import HeedPluginProtocol
import HeedRuntime
import Testing

/// Every event kind's JSON line, as `heed listen --json` and `heed run --json` print it. The
/// lines are those the events printed before they were typed (one struct of optionals each);
/// scripts and clients read them, so a change here is a change of Heed's output format.
@Suite("Event JSON lines")
struct EventJSONTests {
    static func line(_ event: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(event), as: UTF8.self)
    }

    static let final = ListenerEvent.FinalResult(
        text: "set a timer for five minutes", confidence: 0.5, rejected: false, alternatives: ["set a timer for nine minutes"],
        milliseconds: ["decode": 120, "afterEndOfSpeech": 0.25], snrDecibels: 21.6)

    @Test(arguments: [
        (ListenerEvent.listening(mode: "always", source: "examples/audio/pause.wav"),
         #"{"event":"listening","mode":"always","text":"examples/audio/pause.wav","time":0}"#),
        (.speechStarted(time: 0.5), #"{"event":"speechStarted","time":0.5}"#),
        (.partial(time: 1.25, text: "set a"), #"{"event":"partial","isFinal":false,"text":"set a","time":1.25}"#),
        (.speechEnded(time: 2, ending: "complete"), #"{"event":"speechEnded","mode":"complete","time":2}"#),
        (.final(time: 2, final),
         #"{"alternatives":["set a timer for nine minutes"],"confidence":0.5,"event":"final","isFinal":true,"milliseconds":{"afterEndOfSpeech":0.25,"decode":120},"rejected":false,"snrDecibels":21.6,"text":"set a timer for five minutes","time":2}"#),
        (.final(time: 2, .init(text: "pause", confidence: 0.9, rejected: false, alternatives: [], milliseconds: ["decode": 1, "afterEndOfSpeech": 2], snrDecibels: 9.5, denoised: true)),
         #"{"alternatives":[],"confidence":0.9,"denoised":true,"event":"final","isFinal":true,"milliseconds":{"afterEndOfSpeech":2,"decode":1},"rejected":false,"snrDecibels":9.5,"text":"pause","time":2}"#),
        (.final(time: 2, .init(text: "pause", confidence: 0.9, rejected: false, alternatives: [], milliseconds: ["decode": 1, "afterEndOfSpeech": 2], snrDecibels: nil, afterPause: true)),
         #"{"afterPause":true,"alternatives":[],"confidence":0.9,"event":"final","isFinal":true,"milliseconds":{"afterEndOfSpeech":2,"decode":1},"rejected":false,"text":"pause","time":2}"#),
        (.final(time: 2, .init(text: "", confidence: 0, rejected: true, alternatives: [], milliseconds: ["decode": 1, "afterEndOfSpeech": 2], snrDecibels: nil)),
         #"{"alternatives":[],"confidence":0,"event":"final","isFinal":true,"milliseconds":{"afterEndOfSpeech":2,"decode":1},"rejected":true,"text":"","time":2}"#),
        (.askedBack(time: 4, text: "pause", answer: "yes"), #"{"answer":"yes","event":"askedBack","text":"pause","time":4}"#),
        (.ignored(time: 3, reason: "too short to be a command"), #"{"event":"ignored","reason":"too short to be a command","time":3}"#),
        (.ignored(time: 3, reason: "no wake phrase", text: "hey", confidence: 0.25),
         #"{"confidence":0.25,"event":"ignored","reason":"no wake phrase","text":"hey","time":3}"#),
        (.wake(time: 1, phrase: "hey heed", confidence: 0.75), #"{"confidence":0.75,"event":"wake","text":"hey heed","time":1}"#),
        (.wake(time: 1, phrase: "hey heed", confidence: 0.75, denoised: false),
         #"{"confidence":0.75,"denoised":false,"event":"wake","text":"hey heed","time":1}"#),
        (.activated(time: 4), #"{"event":"activated","time":4}"#),
        (.intent(time: 2, IntentMatch(intent: "setTimer", parameters: ["duration": .duration(seconds: 300)])),
         #"{"event":"intent","intent":{"intent":"setTimer","parameters":{"duration":300}},"time":2}"#),
        (.latency(milliseconds: ["endOfSpeechToHandleSent": 12.5]), #"{"event":"latency","milliseconds":{"endOfSpeechToHandleSent":12.5}}"#),
        (.speech(time: 5, .init(text: "Timer set.", status: "granted", mode: "spokenAudio", spoken: true, milliseconds: ["speech": 900])),
         #"{"event":"speech","milliseconds":{"speech":900},"mode":"spokenAudio","spoken":true,"status":"granted","text":"Timer set.","time":5}"#),
        (.speech(time: 5, .init(text: "Timer set.", status: "granted", mode: "spokenAudio", spoken: false, reason: "no device")),
         #"{"event":"speech","mode":"spokenAudio","reason":"no device","spoken":false,"status":"granted","text":"Timer set.","time":5}"#),
        (.vocabulary(time: 6, .init(text: "3 terms", milliseconds: ["rebuild": 4])),
         #"{"event":"vocabulary","milliseconds":{"rebuild":4},"text":"3 terms","time":6}"#),
        (.vocabulary(time: 6, .init(reason: "the new grammar cannot be used", milliseconds: ["rebuild": 4])),
         #"{"event":"vocabulary","milliseconds":{"rebuild":4},"reason":"the new grammar cannot be used","time":6}"#),
        (.context(time: 7, .init(text: "mediaControl")), #"{"event":"context","text":"mediaControl","time":7}"#),
        (.microphoneLent(time: 7.5, to: "org.heed.example-client"), #"{"event":"microphoneLent","text":"org.heed.example-client","time":7.5}"#),
        (.microphoneBack(time: 7.75), #"{"event":"microphoneBack","time":7.75}"#),
        (.stopped(time: 8), #"{"event":"stopped","time":8}"#),
    ] as [(ListenerEvent, String)])
    func listenerEvents(event: ListenerEvent, json: String) throws {
        #expect(try Self.line(event) == json)
    }

    @Test(arguments: [
        (ConversationEvent.intent("setTimer", parameters: ["duration": .number(600), "label": .string("pasta")]),
         #"{"event":"intent","intent":"setTimer","parameters":{"duration":600,"label":"pasta"}}"#),
        (.intent("pause", parameters: [:]), #"{"event":"intent","intent":"pause","parameters":{}}"#),
        (.route(.noActivity), #"{"event":"route","outcome":"none"}"#),
        (.route(.disambiguation(["the pasta timer", "Music"])),
         #"{"event":"route","outcome":"disambiguation","values":["the pasta timer","Music"]}"#),
        (.route(.chosen(app: "org.heed.timer", title: "the pasta timer")),
         #"{"app":"org.heed.timer","event":"route","outcome":"success","text":"the pasta timer"}"#),
        (.authorization(app: "org.heed.timer", status: "authorized", milliseconds: 1.5),
         #"{"app":"org.heed.timer","event":"authorization","milliseconds":1.5,"status":"authorized"}"#),
        (.authorization(app: "org.heed.timer", status: "refused", reason: "the state file is damaged", milliseconds: 1.5),
         #"{"app":"org.heed.timer","event":"authorization","milliseconds":1.5,"status":"refused","text":"the state file is damaged"}"#),
        (.prompt("For how long?"), #"{"event":"prompt","text":"For how long?"}"#),
        (.answer("five minutes"), #"{"event":"answer","text":"five minutes"}"#),
        (.answer(nil), #"{"event":"answer"}"#),
        (.resolve(.init(parameter: "duration", outcome: "success", values: [.number(300)], milliseconds: 2)),
         #"{"event":"resolve","milliseconds":2,"outcome":"success","parameter":"duration","values":[300]}"#),
        (.resolve(.init(parameter: "label", outcome: "notRequired", milliseconds: 2)),
         #"{"event":"resolve","milliseconds":2,"outcome":"notRequired","parameter":"label"}"#),
        (.resolve(.init(parameter: "label", outcome: "failure", reason: "Timers crashed.", milliseconds: 2)),
         #"{"event":"resolve","milliseconds":2,"outcome":"failure","parameter":"label","text":"Timers crashed."}"#),
        (.confirm(.init(app: "org.heed.timer", outcome: "ready", milliseconds: 3)),
         #"{"app":"org.heed.timer","event":"confirm","milliseconds":3,"outcome":"ready"}"#),
        (.handle(.init(app: "org.heed.timer", outcome: "success", text: "Timer set for 5 minutes.", milliseconds: 3)),
         #"{"app":"org.heed.timer","event":"handle","milliseconds":3,"outcome":"success","text":"Timer set for 5 minutes."}"#),
        (.response("Cancelled."), #"{"event":"response","text":"Cancelled."}"#),
        (.end(ConversationResult(ending: .cancelled, message: "Cancelled.")), #"{"event":"end","outcome":"cancelled","text":"Cancelled."}"#),
        (.notification("Pasta timer done.", intent: "setTimer"), #"{"event":"notification","intent":"setTimer","text":"Pasta timer done."}"#),
        (.notification("Something happened."), #"{"event":"notification","text":"Something happened."}"#),
    ] as [(ConversationEvent, String)])
    func conversationEvents(event: ConversationEvent, json: String) throws {
        #expect(try Self.line(event) == json)
    }
}
