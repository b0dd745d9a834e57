// Package structural implements the structural plane of a planar page: how
// rows map to visible leaf items. Today that is the dense form: repetition and
// definition levels with their layer kinds (Lance's RepDefLayer), built from
// Arrow arrays for the writer and unraveled back into Arrow validity for the
// reader. The sparse form (position/count sets) slots in beside it.
package structural
