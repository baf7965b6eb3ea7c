// The Cost page's hardware and model presets as the widgets name them (web/cost.py TARGETS and DRAFTS,
// costs.HARDWARE hold the numbers and sources): shared by the cost widget and the vLLM analysis on Tuning.

export const HARDWARE = [
  ["h100", "H100 SXM (80 GB)"],
  ["8xh100", "8 × H100 SXM, tensor parallel"],
  ["a100", "A100 SXM (80 GB)"],
  ["rtx4090", "GeForce RTX 4090 (24 GB)"],
  ["m1max", "Apple M1 Max laptop (64 GB)"],
];
export const TARGETS = [
  ["llama-3.1-8b", "Llama-3.1-8B"],
  ["llama-3.1-70b", "Llama-3.1-70B"],
];
export const DRAFTS = [
  ["llama-3.2-1b", "Llama-3.2-1B"],
  ["eagle-8b", "EAGLE-style head for the 8B (0.42B)"],
  ["eagle-70b", "EAGLE-style head for the 70B (1.40B)"],
];
