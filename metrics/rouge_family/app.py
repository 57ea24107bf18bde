from nlgmetrics.apps.demo import launch_demo

launch_demo("rouge_family")
