import LaunchOrchestrator

/// A team's own step kind: greets someone in the launch log.
struct GreetStep: StepPlugin {
  static let kind = "example.greet"
  static let summary = "Writes a greeting to the launch log."

  struct Parameters: StepParameters {
    @Parameter("Who to greet.") var name: String
  }

  let name: String

  init(parameters: Parameters) throws {
    guard !parameters.name.isEmpty else { throw ParameterError("name", "'name' cannot be empty.") }
    name = parameters.name
  }

  func run(_ context: StepContext) async throws -> String {
    let greeting = "Hello, \(name)!"
    context.log(greeting)
    return greeting
  }
}
