from nlgmetrics.demo import launch_demo

launch_demo("blanc")
