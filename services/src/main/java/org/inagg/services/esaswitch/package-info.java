/**
 * The shared-pool switch of ESA and ATP as a process ({@code inagg esa-switch}, docs/esa.md): a context validated once
 * ({@link org.inagg.services.esaswitch.EsaSwitchContext}: the pool, allocation mode, priority policy, jobs with every
 * worker's source and each job's parameter server) and {@link org.inagg.services.esaswitch.EsaSwitchNode#launch},
 * which opens its UDP port and runs {@code p4.esa.EsaSwitch} on an agent thread until closed. The command in module
 * cli only maps options onto the context.
 */
package org.inagg.services.esaswitch;
