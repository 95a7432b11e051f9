import OrchestrateCLI
import SimulatePlugin

await Orchestrate.main(plugins: [SimulateStep.self, GreetStep.self])
