public import HeedPlugins
public import HeedRuntime
import Synchronization

/// A person who answers a conversation's questions from a script and remembers what was asked
/// and what they were told: the dispatcher's conversations without a microphone or a terminal.
public final class ScriptedUser: ConversationUser {
    private let state: Mutex<(answers: [String], questions: [String], told: [String])>

    /// - Parameter answers: the answers, in order; once they run out, the user says nothing.
    public init(_ answers: [String] = []) { state = Mutex((answers, [], [])) }

    public func ask(_ question: String, expecting: ExpectedAnswer, app: PluginManifest?) async -> String? {
        state.withLock { state in
            state.questions.append(question)
            return state.answers.isEmpty ? nil : state.answers.removeFirst()
        }
    }

    public func tell(_ text: String, app: PluginManifest?) async { state.withLock { $0.told.append(text) } }

    /// The questions asked, in order.
    public var questions: [String] { state.withLock { $0.questions } }
    /// What the user was told, in order.
    public var told: [String] { state.withLock { $0.told } }
}
