import BooksLibraryPlugin
import ImageCleanupPlugin
import LaunchGatesPlugin
import MusicLibraryPlugin
import OrchestrateCLI
import QueueValidationPlugin
import SampleDataPlugin
import SimulatePlugin
import StoreInitPlugin

await Orchestrate.main(plugins: [
  StoreInitStep.self, SampleDataStep.self, QueueValidationStep.self, ImageCleanupStep.self,
  BooksPageStep.self,
  MusicPageStep.self, MusicSearchStep.self, MaintenanceGate.self, VersionGate.self,
  SessionGate.self,
  HouseholdGate.self, SimulateStep.self,
])
