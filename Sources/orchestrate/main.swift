import LaunchPlugins
import OrchestrateCLI

await Orchestrate.main(registry: .builtIn)
