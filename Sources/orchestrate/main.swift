import LaunchOrchestrator
import LaunchPlugins
import OrchestrateCLI
import SimulatePlugin

// Every built-in kind, and `simulate` for rehearsals.
var registry = PluginRegistry.builtIn
registry.registerSimulate()
await Orchestrate.main(registry: registry)
