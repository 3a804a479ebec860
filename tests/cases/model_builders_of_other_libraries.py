"""Networks with weights built by other libraries: `timm.create_model`, `torch.hub.load`
and `from_pretrained` of a transformers, diffusers, efficientnet_pytorch or peft model
class. A forward of one whose result is only read as numbers records a graph for
nothing; before, such a model counted as a module only once its `.parameters()` or a
mode switch was seen. Tokenizers, configs, processors, schedulers and pipelines are no
torch modules."""

import timm
import torch
from diffusers import AutoPipelineForInpainting, DDPMScheduler, StableDiffusionPipeline
from efficientnet_pytorch import EfficientNet
from transformers import AutoModel, AutoTokenizer, BertForSequenceClassification

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
encoder = AutoModel.from_pretrained("bert-base-uncased").to("cuda")
classifier = BertForSequenceClassification.from_pretrained("bert-base-uncased")
backbone = timm.create_model("resnet50", pretrained=True)
hub_model = torch.hub.load("pytorch/vision", "resnet18", pretrained=True)
effnet = EfficientNet.from_pretrained("efficientnet-b0")


def embed(texts):
    inputs = tokenizer(texts, return_tensors="pt", padding=True)
    outputs = encoder(**inputs)  # error: GL012
    return outputs.last_hidden_state.mean(dim=1).cpu().numpy()


def classify(inputs):
    logits = classifier(**inputs).logits  # error: GL012
    return logits.argmax(-1).tolist()


def top_class(images):
    return backbone(images).argmax(1).item()  # error: GL012


def hub_top_class(images):
    return hub_model(images).argmax(1).item()  # error: GL012


def effnet_top_class(images):
    return effnet(images).argmax(1).item()  # error: GL012


# -- no torch modules -------------------------------------------------------------------


def token_ids(texts):
    encoded = tokenizer(texts, return_tensors="pt")
    return encoded["input_ids"].tolist()


def noise_steps(sample, noise):
    scheduler = DDPMScheduler.from_pretrained("google/ddpm-cifar10-32")
    return scheduler.add_noise(sample, noise, torch.tensor([10])).mean().item()


def generate(prompt):
    pipe = StableDiffusionPipeline.from_pretrained("runwayml/stable-diffusion-v1-5")
    return pipe(prompt).images[0].size


def inpaint(inputs):
    pipeline = AutoPipelineForInpainting.from_pretrained("diffusers/sdxl-inpainting")
    return pipeline(**inputs).images[0].shape
