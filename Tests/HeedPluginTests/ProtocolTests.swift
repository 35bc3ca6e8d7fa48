import Foundation
import HeedPluginProtocol
import Testing

@Suite("Wire protocol")
struct ProtocolTests {
    func roundTrip<T: Codable & Equatable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        let decoded = try JSONDecoder().decode(T.self, from: data)
        #expect(decoded == value)
        let text = String(decoding: data, as: UTF8.self)
        #expect(!text.contains("\n"))
        return text
    }

    @Test func requestsRoundTrip() throws {
        let intent = PluginIntent(name: "playMedia", parameters: ["playlist": "road trip", "shuffle": true, "n": 2])
        let requests: [PluginRequest] = [
            PluginRequest(id: 1, .hello(PluginProtocolHeader(), intents: ["playMedia"])),
            PluginRequest(id: 2, .resolve(intent, parameter: "playlist")),
            PluginRequest(id: 3, .resolve(intent, parameter: "playlist", userChoice: true)),
            PluginRequest(id: 4, .confirm(intent)),
            PluginRequest(id: 5, .handle(intent)),
            PluginRequest(id: 6, .shutdown),
        ]
        for request in requests { _ = try roundTrip(request) }
        #expect(
            try roundTrip(requests[1])
                == #"{"id":2,"intent":{"name":"playMedia","parameters":{"n":2,"playlist":"road trip","shuffle":true}},"op":"resolve","parameter":"playlist"}"#
        )
        #expect(try roundTrip(requests[0]) == #"{"id":1,"intents":["playMedia"],"op":"hello","serializationVersion":1}"#)
    }

    @Test func messagesRoundTrip() throws {
        let messages: [PluginMessage] = [
            .response(PluginResponse(id: 1, .hello(PluginHello(appID: "org.heed.media", intents: ["playMedia"])))),
            .response(PluginResponse(id: 2, .resolve(.success("Road Trip")))),
            .response(PluginResponse(id: 2, .resolve(.disambiguation(["Road Trip", "Road Trip Classics"])))),
            .response(PluginResponse(id: 2, .resolve(.confirmationRequired(600)))),
            .response(PluginResponse(id: 2, .resolve(.needsValue))),
            .response(PluginResponse(id: 2, .resolve(.notRequired))),
            .response(PluginResponse(id: 2, .resolve(.unsupported(reason: "No such playlist.")))),
            .response(PluginResponse(id: 3, .confirm(.ready))),
            .response(PluginResponse(id: 3, .confirm(.failure(reason: "Nothing is playing.")))),
            .response(PluginResponse(id: 4, .handle(.success("Playing Road Trip.")))),
            .response(PluginResponse(id: 4, .handle(.failure()))),
            .response(PluginResponse(id: 4, .handle(.inProgress("Starting.")))),
            .response(PluginResponse(id: 5, .error(message: "unknown intent"))),
            .notification(PluginNotification(text: "Your pasta timer is done.", intent: "setTimer", event: "timerFired")),
            .notification(PluginNotification(text: "Hello.")),
        ]
        for message in messages { _ = try roundTrip(message) }
        #expect(
            try roundTrip(messages[2])
                == #"{"id":2,"outcome":"disambiguation","type":"resolve","values":["Road Trip","Road Trip Classics"]}"#)
        #expect(try roundTrip(messages[14]) == #"{"text":"Hello.","type":"notification"}"#)
    }

    @Test func valuesFollowTheConventions() throws {
        let value: PluginValue = ["duration": 5400, "fraction": 2.5, "ordinal": "last", "flag": false, "none": nil, "list": [1, "a"]]
        let text = try roundTrip(value)
        #expect(text == #"{"duration":5400,"flag":false,"fraction":2.5,"list":[1,"a"],"none":null,"ordinal":"last"}"#)
        #expect(PluginValue.number(5400).durationValue == .seconds(5400))
        #expect(PluginValue.number(2).integerValue == 2)
        #expect(PluginValue.number(2.5).integerValue == nil)
        #expect(PluginValue.string("x").numberValue == nil)
    }

    @Test func headerIsReadBeforeTheRest() throws {
        let line = #"{"appId":"x.y","id":1,"intents":[],"serializationVersion":7,"type":"hello","future":{"a":1}}"#
        let header = try JSONDecoder().decode(PluginProtocolHeader.self, from: Data(line.utf8))
        #expect(header.serializationVersion == 7)
    }

    @Test func unknownOutcomesAreRejected() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(PluginMessage.self, from: Data(#"{"id":1,"type":"resolve","outcome":"maybe"}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(PluginRequest.self, from: Data(#"{"id":1,"op":"dance"}"#.utf8))
        }
    }
}
