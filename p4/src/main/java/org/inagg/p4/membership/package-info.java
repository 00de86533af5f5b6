/**
 * Who may speak for a job: its workers' sources (registered by the control plane, or learned from JOINs in open
 * mode), its session, and each worker's incarnation. One component for every node that answers JOINs: the software
 * switch, the ESA switch and the parameter server (docs/sessions.md).
 */
package org.inagg.p4.membership;
