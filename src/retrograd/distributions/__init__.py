"""Probability distributions, as ``torch.distributions``: parameterizable distributions with
``sample``/``rsample``/``log_prob``/``entropy``, their constraints, and ``kl_divergence``.
Written on retrograd's public tensor API, so gradients flow through ``rsample``, ``log_prob``
and ``entropy`` like through any other op (the score-function and reparameterization
estimators of REINFORCE and VAEs).

>>> import retrograd as torch
>>> from retrograd.distributions import Normal, kl_divergence
>>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0))
tensor(0.5000)
"""

from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .uniform import Uniform
from .weibull import Weibull

__all__ = ["constraints", "Gamma", "Chi2", "Beta", "Dirichlet", "StudentT", "InverseGamma",
           "FisherSnedecor", "NegativeBinomial",
           "Bernoulli", "Categorical", "Cauchy", "Distribution",
           "Exponential", "ExponentialFamily", "Geometric", "Independent", "kl_divergence",
           "Laplace", "MultivariateNormal", "Normal", "OneHotCategorical", "Poisson",
           "register_kl", "Uniform", "HalfNormal", "LogNormal", "TransformedDistribution",
           "Transform", "AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform",
           "IndependentTransform", "PowerTransform", "SigmoidTransform", "TanhTransform",
           "identity_transform", "transforms", "Gumbel", "MixtureSameFamily",
           "Binomial", "Multinomial", "RelaxedOneHotCategorical",
           "HalfCauchy", "OneHotCategoricalStraightThrough", "Pareto",
           "RelaxedBernoulli", "Weibull", "biject_to", "transform_to",
           "CumulativeDistributionTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "ReshapeTransform", "SoftmaxTransform",
           "SoftplusTransform", "StickBreakingTransform", "Kumaraswamy", "LogisticNormal",
           "LowRankMultivariateNormal", "ContinuousBernoulli",
           "GeneralizedPareto", "CatTransform", "StackTransform",
           "CorrCholeskyTransform"]
