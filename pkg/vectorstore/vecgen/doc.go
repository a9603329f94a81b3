// Package vecgen generates unit vectors shaped like sentence embeddings of
// document chunks, for benchmarks and recall tests of vector indexes.
//
// Uniformly random unit vectors are the wrong test of an approximate index:
// in 384 dimensions every pair is nearly orthogonal and a point's neighbours
// are barely nearer than the rest, which no embedding model produces. Real
// embeddings are anisotropic (a large shared component: random pairs of E5
// embeddings have cosine ≈ 0.74), their variance decays over directions, and
// they cluster by topic and by document (chunks of a document are close).
//
// The model: chunk = normalize(Mean·m + topic + document + noise), with m a
// fixed unit vector and the three Gaussian terms shaped by a power-law
// spectrum (variance of direction i ∝ i^-Alpha). Default is calibrated on
// 7,178 multilingual-e5-small embeddings (passages, sentences and sentence
// windows of a HotpotQA sample) and its 100 questions (embedded as queries;
// scripts/bench/embed_hotpotqa.py):
//
//	                                     real E5   Default
//	random-pair cosine                   0.744     0.749
//	10th-neighbour cosine                0.843     0.848
//	50th-neighbour cosine                0.813     0.818
//	local intrinsic dim. (MLE, k = 20)   9.5       10.8
//	dims for 50% variance                62        57
//	question → nearest chunk cosine      0.900     0.899
//	question → 10th / 50th chunk         0.842 / 0.804   0.840 / 0.810
//
// LoadF32 reads real embeddings written as raw little-endian float32, so
// that a benchmark can run on them too.
package vecgen
