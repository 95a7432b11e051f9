import LaunchOrchestrator
import LaunchPlugins
import OrchestrateCLI

var registry = PluginRegistry.builtIn
registry.register(GreetStep.self)
await Orchestrate.main(registry: registry)
