import LaunchOrchestrator

/// How the app greets: a value the app hands its launch, and a custom binary hands its
/// rehearsals (`Orchestrate.main(registry:environment:)`).
struct Salutation: Sendable {
  var word: String
}

/// A team's own step kind: greets someone in the launch log.
struct GreetStep: StepPlugin {
  static let kind = "example.greet"
  static let summary = "Writes a greeting to the launch log."
  static let requirements: [StepRequirement] = [.required(Salutation.self)]

  struct Parameters: StepParameters {
    @Parameter("Who to greet.", nonEmpty: true) var name: String
    @Parameter("How many times to say hello.", in: 1...3) var times = 1
  }

  let name: String
  let times: Int

  init(parameters: Parameters) {
    name = parameters.name
    times = parameters.times
  }

  func run(_ context: StepContext) async throws -> String {
    let word = try context.environment(Salutation.self).word
    let greeting = Array(repeating: word, count: times).joined(separator: ", ") + ", \(name)!"
    context.log(greeting)
    return greeting
  }
}
