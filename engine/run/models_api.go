package run

// This file belongs to the models API (issue 4, runtime-2). The version
// here is a compiling stub written by runtime-1; see SEAMS.md.

// ModelConfig configures model access for a run: the gateway client (or
// how to build one), the model catalog and the picker.
type ModelConfig struct{}

// modelRun is the per-run models state (bindings, default, client slot).
type modelRun struct{}

// modelVM is the per-VM models state (models.use selection, frozen options).
type modelVM struct{}

// initModels runs at run start (client setup of runtime.md §1 step 4).
func (r *runner) initModels() error { return nil }

// installModelsH1 sets the global `models` in the H1 VM.
func (r *runner) installModelsH1(vm *VM) { vm.L.SetGlobal("models", stubTable(vm.L, "models")) }

// installModelsSection sets the global `models` in a section or arm VM,
// and attaches the infer hook.
func (r *runner) installModelsSection(vm *VM) { vm.L.SetGlobal("models", stubTable(vm.L, "models")) }

// bindModelGlobals raw-sets one global per bound model alias (§3.1 step 8).
func (r *runner) bindModelGlobals(vm *VM) {}

// takeModelBindingError returns (and clears) the first typed binding error
// a models call recorded during the last H1 block (§2.1), or nil.
func (r *runner) takeModelBindingError(vm *VM) error { return nil }
