/**
 * The long-running services of an inagg deployment, each a context validated once and a launch: the controller, the
 * per-host agent, the software switch, the shared-pool switch, the parameter server and a worker
 * ({@link org.inagg.services.NodeLifecycle}: how a launched node closes).
 */
package org.inagg.services;
