/* The kernel engine for the manager (issue 12): which VMs the kernel's
 * DAMOS moves, and their schemes' goals from each round's shares. vtierd
 * still measures every VM and divides the top tier (policy/vt-tiering.h);
 * for a VM the kernel moves it plans no job, and its share goes to the
 * kernel as per-memcg goals on the fast node (access/vt-damos-tiering.h):
 * promote while the VM's memcg holds less than its share (plus QEMU's own
 * memory there, which the memcg counts too, plus a margin through which
 * hot memory on the slow node is exchanged with its cold memory), demote
 * its coldest memory while it holds more. The move budget ([tiering]
 * migrate-mib-per-s, migrate-cpu-ms-per-s) is split between them. */
#pragma once

#include <glib.h>

#include "daemon/vt-config.h"
#include "daemon/vt-vm.h"
#include "policy/vt-tiering.h"

typedef struct _VtKernelEngine VtKernelEngine;

VtKernelEngine *vt_kernel_engine_new (void);
void vt_kernel_engine_free (VtKernelEngine *engine);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VtKernelEngine, vt_kernel_engine_free)

/* The engine that moves `vm`'s memory this round: `wanted` ([tiering]
 * engine), unless the VM or the kernel cannot (`in` is its tiering input
 * as filled so far). A VM leaving the kernel engine has its schemes
 * removed. */
VtTieringEngine vt_kernel_engine_choose (VtKernelEngine *engine, VtVm *vm, VtTieringEngine wanted,
                                         const VtTieringInput *in);
/* Its engine as of its last choice, and why not the kernel (NULL when the
 * kernel it is, or user was asked). */
VtTieringEngine vt_kernel_engine_of (VtKernelEngine *engine, VtVm *vm, const char **why);
/* After a round's plan: the goals of every VM the kernel moves, from its
 * stats (vt_tiering_stats). */
void vt_kernel_engine_apply (VtKernelEngine *engine, GPtrArray *vms, VtTiering *tiering,
                             const VtConfig *config);
void vt_kernel_engine_forget (VtKernelEngine *engine, VtVm *vm);

/* A VM's scheme's byte quota per second: its part of the mover's `rate`,
 * but no more than what is left to bring up before its goal (`goal` bytes
 * of the fast node in its memcg, `held` now), rounded up to 8 MiB. The
 * temporal goal tuner grants the whole quota each second until the goal
 * reads met, so a VM near its share overshot by up to a second's quota,
 * which vtierd then demoted (408 of 1560 MiB migrated in the
 * kernel-engine scenario at ae74b66). */
guint64 vt_kernel_engine_quota (guint64 rate, guint64 goal, guint64 held);
