import LaunchOrchestrator
import LaunchPlugins
import OrchestrateCLI
import SimulatePlugin

var registry = PluginRegistry.builtIn
registry.registerSimulate()
registry.register(GreetStep.self)
// Rehearsals get the values the app would hand its launch.
var environment = LaunchEnvironment()
environment[Salutation.self] = Salutation(word: "Hello")
await Orchestrate.main(registry: registry, environment: environment)
