/**
 * ESA (2022): several jobs sharing a switch's aggregators. A slot-level simulator of the memory-contention model
 * and the three allocation policies: ESA's preemptive priority allocation, SwitchML's static partition and ATP's
 * first-come sharing with deallocation on the PS's acknowledgement.
 */
package org.inagg.control.esa;
